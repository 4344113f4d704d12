import time; T0 = time.perf_counter()
"""Algae bloom satellite spectra: per-pixel reflectance spectra (Sentinel-3
OLCI-like, 21 bands plus derived band ratios and chlorophyll indices over a
7x7 neighbourhood) are generated once into memory; model.fit streams them
from tf.data.Dataset.from_tensor_slices + prefetch into a wide MLP that
classifies harmful bloom (Karenia / Chrysochromulina) risk near net-pen sites."""
import os, sys, json
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
        return sum(g) / len(g)

N = 16384
BATCH = 128
EPOCHS = 3
STEPS = N // BATCH
BANDS = 21
NFEAT = BANDS * 24     # 21 bands x (centre + 7x7 summary stats)
CLASSES = 4            # none / watch / bloom / harmful bloom

rng = np.random.default_rng(93)
wl = np.linspace(400, 1020, BANDS)
chl = rng.lognormal(0.5, 1.0, N).astype(np.float32)
base = 0.02 + 0.01 * np.exp(-((wl - 560) / 60) ** 2)
spec = base[None, :] * (1 + 0.15 * np.log1p(chl)[:, None]) + rng.normal(0, 0.002, (N, BANDS))
spec[:, 10] -= 0.003 * np.log1p(chl)      # 681 nm fluorescence trough
X = np.concatenate([spec * (1 + rng.normal(0, 0.05, (N, BANDS))) for _ in range(24)], 1).astype(np.float32)
X = (X - X.mean(0)) / (X.std(0) + 1e-6)
Y = np.digitize(chl, [2.0, 8.0, 20.0]).astype(np.int32)

def make_ds():
    return tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(4096, seed=93).batch(BATCH).repeat().prefetch(tf.data.AUTOTUNE)

def build_model():
    keras.utils.set_random_seed(93)
    m = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(CLASSES, activation="softmax"),
    ])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m

def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()

full = run(make_ds())
emit({"steps_per_second": 1.0 / full})
print(f"[algaebloom] in-memory fit: {full*1000:.2f} ms/step, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    batch = next(iter(make_ds()))
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[algaebloom] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}")
