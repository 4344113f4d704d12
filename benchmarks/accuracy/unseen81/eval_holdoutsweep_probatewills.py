"""Probate will abstracts -> testator occupation class, with a held-out sweep.

Input path: in-memory NumPy features of abstracted wills (bequest counts,
named kin, property terms) feed model.fit.  A callback scores the full
held-out calendar of wills (model.predict on a large array) at the end of
every epoch, in the normal and the --truth run alike.  Expected bottleneck:
evaluation (on_epoch_end), which the script reports as a share of wall.
"""
import time; T0 = time.perf_counter()
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 128, 40, 5
NFEAT, N_TRAIN, N_HELD = 192, 8192, 500_000
CLASSES = ["yeoman", "husbandman", "gentleman", "widow", "clothier", "mariner", "clerk", "labourer"]


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def will_abstracts(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, len(CLASSES), n).astype(np.int32)
    centres = np.random.default_rng(81).normal(0, 1, (len(CLASSES), NFEAT)).astype(np.float32)
    x = rng.standard_normal((n, NFEAT), dtype=np.float32)
    x *= 2.0
    x += centres[y]
    return x, y


def build_model():
    model = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(len(CLASSES)),
    ])
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


class HeldOutSweep(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y, self.seconds, self.acc = x, y, 0.0, []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        logits = self.model.predict(self.x, batch_size=2048, verbose=0)
        self.acc.append(float((logits.argmax(-1) == self.y).mean()))
        self.seconds += time.perf_counter() - t


def train(ds, held):
    model = build_model()
    timer, sweep = StepTimer(), HeldOutSweep(*held)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, sweep], verbose=0)
    return timer.seconds_per_step(), sweep


keras.utils.set_random_seed(81)
x_tr, y_tr = will_abstracts(N_TRAIN, 1)
held = will_abstracts(N_HELD, 2)
print("probatewills: data ready at %.1f s" % (time.perf_counter() - T0))
ds = tf.data.Dataset.from_tensor_slices((x_tr, y_tr)).shuffle(N_TRAIN, seed=81).batch(BATCH).repeat()
full, sweep = train(ds, held)
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
print("probatewills: %.1f ms/step, held-out acc %.3f, evaluation %.1f s of %.1f s wall = %.0f%%" % (
    full * 1e3, sweep.acc[-1], sweep.seconds, wall, 100 * sweep.seconds / wall))
if TRUTH:
    batch = (tf.constant(x_tr[:BATCH]), tf.constant(y_tr[:BATCH]))
    compute, sweep2 = train(tf.data.Dataset.from_tensors(batch).repeat(), held)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    wall = time.perf_counter() - T0
    print("probatewills truth: full %.1f ms, compute %.1f ms, input fraction %.3f; evaluation %.1f s of %.1f s total = %.0f%%" % (
        full * 1e3, compute * 1e3, frac, sweep.seconds + sweep2.seconds, wall, 100 * (sweep.seconds + sweep2.seconds) / wall))
