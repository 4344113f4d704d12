import time
T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(gaps))


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

# Orchid nursery leaf-spot screening: leaf image patches are already decoded
# into an in-memory uint8 array; tf.data only slices, casts and prefetches.
# The convolutional model itself dominates (compute-bound, model.fit).
BATCH = 32
STEPS = 120
EPOCHS = 3
N_IMG = 2048
SIDE = 32
CLASSES = 6

rng = np.random.default_rng(78)
X = rng.integers(0, 255, (N_IMG, SIDE, SIDE, 3), dtype=np.uint8)
Y = rng.integers(CLASSES, size=N_IMG).astype(np.int32)


def full_ds():
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(BATCH)
    return ds.map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y)).prefetch(2)


def build():
    m = keras.Sequential([keras.Input((SIDE, SIDE, 3)),
                          keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
                          keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
                          keras.layers.MaxPooling2D(),
                          keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                          keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                          keras.layers.MaxPooling2D(),
                          keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
                          keras.layers.GlobalAveragePooling2D(),
                          keras.layers.Dense(CLASSES)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    keras.utils.set_random_seed(78)
    m = build()
    timer = StepTimer()
    m.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0, shuffle=False)
    return timer.seconds_per_step()


full = run(full_ds())
emit({"steps_per_second": 1.0 / full})
print(f"[compute_convfit_orchidleaf] full {full*1000:.1f} ms/step, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    batch = next(iter(full_ds()))
    comp = run(tf.data.Dataset.from_tensors(batch).repeat())
    f = input_fraction(full, comp)
    emit({"truth_input_fraction": f})
    print(f"[compute_convfit_orchidleaf] truth: compute {comp*1000:.1f} ms/step, input fraction {f:.3f}")
