import time; T0 = time.perf_counter()
"""Washi paper-stock fibre spectra -> mill of origin.  For a later "how did the
first layer drift" plot, a callback copies the first-layer kernel to a Python
list every third batch and never lets go of it, so host memory grows for the
whole run."""
import os, sys, json, resource
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")

N_BANDS = 1024       # NIR reflectance bands per fibre scan
HIDDEN = 1024
MILLS = ["echizen", "mino", "tosa", "kurotani", "ogawa", "hosokawa", "sekishu", "inshu"]
N_SAMPLES = 4096
BATCH = 64
STEPS = 87
EPOCHS = 14
KEEP_EVERY = 3

class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))

def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0

class KernelHistory(keras.callbacks.Callback):
    """Keeps a copy of the first Dense kernel every KEEP_EVERY batches (never freed)."""
    def __init__(self):
        super().__init__(); self.history = []
    def on_train_batch_end(self, batch, logs=None):
        if batch % KEEP_EVERY == 0:
            self.history.append(np.array(self.model.layers[0].kernel.numpy(), copy=True))
    def on_epoch_end(self, epoch, logs=None):
        print(f"  epoch {epoch}: {len(self.history)} kernel copies, RSS {rss_mib():.0f} MiB")

def fibre_spectra(rng, n):
    labels = rng.integers(0, len(MILLS), n)
    wl = np.linspace(0, 1, N_BANDS)[None]
    centre = (0.2 + 0.08 * labels)[:, None]
    spec = np.exp(-((wl - centre) ** 2) / 0.01) + 0.5 * np.exp(-((wl - 0.85) ** 2) / 0.02)
    spec += rng.normal(0, 0.05, (n, N_BANDS))
    return spec.astype(np.float32), labels.astype(np.int32)

def build_model():
    keras.utils.set_random_seed(98)
    model = keras.Sequential([
        keras.Input((N_BANDS,)),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(len(MILLS)),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model

def train(data, history_cb):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, history_cb], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]

rng = np.random.default_rng(98)
x, y = fibre_spectra(rng, N_SAMPLES)
ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_SAMPLES, seed=98).repeat().batch(BATCH).prefetch(2)
kept = KernelHistory()
full_s, loss = train(ds, kept)
emit({"steps_per_second": 1.0 / full_s})
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(f"washistock: {full_s*1000:.1f} ms/step, {1.0/full_s:.2f} steps/s, final loss {loss:.4f}, "
      f"{len(kept.history)} kernel copies, peak RSS {peak:.0f} MiB, wall {time.perf_counter()-T0:.1f} s")

if TRUTH:
    fixed = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
    comp_s, _ = train(fixed, KernelHistory())
    frac = min(max((full_s - comp_s) / full_s, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f"washistock truth: compute {comp_s*1000:.1f} ms/step, full {full_s*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, peak RSS {peak:.0f} MiB, wall {time.perf_counter()-T0:.1f} s")
