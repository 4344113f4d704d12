import time; T0 = time.perf_counter()
"""Garment-size recommender with a heavy end-of-epoch fitting audit.

Training is a quick NumPy-array fit; after every epoch a callback scores
the whole archive of past customer measurement cards with model.predict
and model.evaluate to track size-recommendation accuracy.
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

SEED = 10209
BATCH = 128
STEPS = 120
EPOCHS = 4
N_FEAT = 32
N_SIZES = 10
N_ARCHIVE = 240_000


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
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

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


class ArchiveAudit(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.seconds = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        logits = self.model.predict(self.x, batch_size=1024, verbose=0)
        hit = float(np.mean(np.argmax(logits, axis=1) == self.y))
        loss, acc = self.model.evaluate(self.x, self.y, batch_size=1024, verbose=0)
        self.seconds += time.perf_counter() - t
        print(f"  epoch {epoch}: archive hit-rate {hit:.3f}, loss {loss:.3f}", flush=True)


def cards(rng, n):
    x = rng.normal(size=(n, N_FEAT)).astype(np.float32)
    y = np.clip(((x[:, 0] + 0.5 * x[:, 1]) * 2.5 + 5).astype(np.int32), 0, N_SIZES - 1)
    return x, y


rng = np.random.default_rng(SEED)
x_train, y_train = cards(rng, BATCH * STEPS)
x_arch, y_arch = cards(rng, N_ARCHIVE)


def make_model():
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([
        keras.Input(shape=(N_FEAT,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(N_SIZES),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


model = make_model()
timer, audit = StepTimer(), ArchiveAudit(x_arch, y_arch)
t = time.perf_counter()
model.fit(x_train, y_train, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, audit], verbose=0)
fit_wall = time.perf_counter() - t
full = timer.sec_per_step()
emit({"steps_per_second": 1.0 / full})
wall = time.perf_counter() - T0
print(f"eval_smockrow_yokeby: {1.0 / full:.1f} steps/s, fit {fit_wall:.1f}s, audit {audit.seconds:.1f}s "
      f"= {100 * audit.seconds / fit_wall:.0f}% of fit, {100 * audit.seconds / wall:.0f}% of wall {wall:.1f}s")

if TRUTH:
    batch = (x_train[:BATCH], y_train[:BATCH])
    model = make_model()
    timer, audit = StepTimer(), ArchiveAudit(x_arch, y_arch)
    model.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS, epochs=EPOCHS,
              callbacks=[timer, audit], verbose=0)
    compute = timer.sec_per_step()
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full * 1e3:.1f} ms/step, compute {compute * 1e3:.1f} ms/step, "
          f"input fraction {frac:.3f}")
