import time; T0 = time.perf_counter()
"""Crimp-fold quality from pleat-profile scans.  The workshop wants a restorable
.keras archive of the whole model after every few batches, so one callback
stamps step time and then writes the full model (architecture, weights and
optimizer state) to disk."""
import os, sys, json, shutil, tempfile
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

PROFILE = 256
N_SAMPLES = 4096
BATCH = 16
STEPS = 90
EPOCHS = 4
SAVE_EVERY = 1
CLASSES = ["clean", "offset", "torn", "uneven"]

class TimedArchiver(keras.callbacks.Callback):
    """Stamps the step, then saves the whole model, then restarts the clock."""
    def __init__(self, path):
        super().__init__(); self.path = path
        self.gaps = []; self.last = None; self.save_seconds = 0.0; self.saves = 0
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        if (batch + 1) % SAVE_EVERY == 0:
            t = time.perf_counter()
            self.model.save(self.path)
            self.save_seconds += time.perf_counter() - t
            self.saves += 1
        self.last = time.perf_counter()
    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))

def pleat_profiles(rng, n):
    labels = rng.integers(0, len(CLASSES), n)
    x = np.linspace(0, 8 * np.pi, PROFILE)[None]
    prof = np.abs(np.sin(x + 0.3 * (labels == 1)[:, None] * x / 8))
    prof += 0.3 * (labels == 2)[:, None] * (rng.random((n, PROFILE)) > 0.97)
    prof *= 1 + 0.2 * (labels == 3)[:, None] * np.sin(x / 4)
    prof += rng.normal(0, 0.05, (n, PROFILE))
    return prof.astype(np.float32), labels.astype(np.int32)

def build_model():
    keras.utils.set_random_seed(98)
    model = keras.Sequential([
        keras.Input((PROFILE,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(len(CLASSES)),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model

def train(data, path):
    model = build_model()
    cb = TimedArchiver(path)
    t = time.perf_counter()
    hist = model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[cb], verbose=0)
    print(f"  fit started at {t-T0:.1f} s, took {time.perf_counter()-t:.1f} s "
          f"(saves {cb.save_seconds:.1f} s, step gaps {sum(cb.gaps):.1f} s)")
    return cb, hist.history["loss"][-1]

root = tempfile.mkdtemp(prefix="u98_checkpoint_wholemodelsave_crimpfolds_")
try:
    rng = np.random.default_rng(98)
    x, y = pleat_profiles(rng, N_SAMPLES)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_SAMPLES, seed=98).repeat().batch(BATCH).prefetch(2)
    cb, loss = train(ds, os.path.join(root, "crimpfolds_latest.keras"))
    full_s = cb.seconds_per_step()
    save_total = cb.save_seconds
    emit({"steps_per_second": 1.0 / full_s})
    wall = time.perf_counter() - T0
    print(f"crimpfolds: {full_s*1000:.1f} ms/step, {1.0/full_s:.2f} steps/s, final loss {loss:.4f}, "
          f"{cb.saves} saves, save {save_total:.1f} s of wall {wall:.1f} s = {100*save_total/wall:.1f}%")
    if TRUTH:
        fixed = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        cb2, _ = train(fixed, os.path.join(root, "crimpfolds_fixed.keras"))
        comp_s = cb2.seconds_per_step()
        save_total += cb2.save_seconds
        frac = min(max((full_s - comp_s) / full_s, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        wall = time.perf_counter() - T0
        print(f"crimpfolds truth: compute {comp_s*1000:.1f} ms/step, full {full_s*1000:.1f} ms/step, "
              f"input fraction {frac:.3f}, save {save_total:.1f} s of wall {wall:.1f} s = {100*save_total/wall:.1f}%")
finally:
    shutil.rmtree(root, ignore_errors=True)
