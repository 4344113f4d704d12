"""Grocery next-basket recommendation with an epoch-end hit-rate report.

Users' last basket (bag of product ids) is generated as in-memory NumPy
arrays and a softmax-over-catalogue model is trained with a short
model.fit. A HitRateAtK callback runs at every epoch end: model.predict over
a large held-out user set, top-10 extraction with argpartition, then
model.evaluate on the same hold-out, which dominates the wall time.
"""
import os
import sys
import json
import time
import shutil
import tempfile

_T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 256
STEPS = 40
EPOCHS = 3
N_PROD = 4000
BASKET = 24
N_TRAIN = BATCH * STEPS
N_HOLD = 25000


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class HitRateAtK(keras.callbacks.Callback):
    def __init__(self, x, y, k=10):
        super().__init__()
        self.x, self.y, self.k = x, y, k
        self.seconds, self.scores = 0.0, []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        probs = self.model.predict(self.x, batch_size=1024, verbose=0)
        top = np.argpartition(-probs, self.k, axis=1)[:, :self.k]
        hit = float(np.mean(np.any(top == self.y[:, None], axis=1)))
        ev = self.model.evaluate(self.x, self.y, batch_size=1024, verbose=0, return_dict=True)
        self.scores.append((hit, ev["loss"]))
        self.seconds += time.perf_counter() - t


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    aisle = rng.integers(0, 80, n)
    basket = (aisle[:, None] * 50 + rng.integers(0, 100, (n, BASKET))) % N_PROD
    basket = np.where(rng.random((n, BASKET)) < 0.3, 0, basket).astype(np.int32)
    nxt = ((aisle * 50 + rng.integers(0, 100, n)) % N_PROD).astype(np.int32)
    return basket, nxt


def build_model():
    keras.utils.set_random_seed(37)
    inp = keras.Input((BASKET,), dtype="int32")
    x = keras.layers.Embedding(N_PROD, 64, mask_zero=True)(inp)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(N_PROD, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


def train(data, hold):
    model = build_model()
    timer = StepTimer()
    hr = HitRateAtK(*hold)
    if isinstance(data, tf.data.Dataset):
        model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, hr], verbose=0)
    else:
        model.fit(data[0], data[1], batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, hr], verbose=0)
    return timer.seconds_per_step(), hr


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u56_eval_hitrate_callback_nextbasket_")
    try:
        t0 = time.perf_counter()
        xtr, ytr = make_data(N_TRAIN, 1)
        hold = make_data(N_HOLD, 2)
        full, hr = train((xtr, ytr), hold)
        wall = time.perf_counter() - _T0
        report("steps_per_second", 1.0 / full)
        msg = "full %.1f ms/step hit@10 %.3f eval %.1f s of %.1f s (%.0f%%)" % (
            full * 1e3, hr.scores[-1][0], hr.seconds, wall, 100 * hr.seconds / wall)
        if truth:
            batch = (tf.constant(xtr[:BATCH]), tf.constant(ytr[:BATCH]))
            comp, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), hold)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += " compute %.1f ms/step truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("eval_hitrate_callback_nextbasket: %s (%.1f s)" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
