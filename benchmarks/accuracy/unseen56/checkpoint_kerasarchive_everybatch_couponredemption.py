"""Coupon-redemption prediction for a retail loyalty app, with frequent saves.

Shopper ids, coupon ids and a few numeric features are generated as
in-memory NumPy arrays; a wide embedding model is trained with model.fit.
A callback writes a full .keras archive (weights plus optimizer state) after
every batch so a pre-emptible worker can resume; those saves dominate wall time.
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

BATCH = 512
STEPS = 32
EPOCHS = 2
SAVE_EVERY = 1
N_SHOPPERS = 200000
N_COUPONS = 20000
DIM = 32
N = BATCH * STEPS


class TimedSaver(keras.callbacks.Callback):
    """Step timer and periodic saver: the save is bracketed out of the step gaps."""

    def __init__(self, folder):
        super().__init__()
        self.folder = folder
        self.gaps, self._resume = [], None
        self.save_seconds, self.saves = 0.0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self._resume = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._resume is not None:
            self.gaps.append(now - self._resume)
        if batch % SAVE_EVERY == 0:
            self.model.save(os.path.join(self.folder, "resume_%d.keras" % (self.saves % 3)))
            self.saves += 1
            self.save_seconds += time.perf_counter() - now
        self._resume = time.perf_counter()

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_data(seed):
    rng = np.random.default_rng(seed)
    shopper = rng.integers(0, N_SHOPPERS, N).astype(np.int32)
    coupon = rng.integers(0, N_COUPONS, N).astype(np.int32)
    num = rng.random((N, 12), dtype=np.float32)
    y = (((shopper + coupon) % 5 == 0) | (num[:, 0] > 0.9)).astype(np.float32)
    return {"shopper": shopper, "coupon": coupon, "num": num}, y


def build_model():
    keras.utils.set_random_seed(41)
    s = keras.Input((), dtype="int32", name="shopper")
    c = keras.Input((), dtype="int32", name="coupon")
    n = keras.Input((12,), name="num")
    es = keras.layers.Embedding(N_SHOPPERS, DIM)(s)
    ec = keras.layers.Embedding(N_COUPONS, DIM)(c)
    x = keras.layers.Concatenate()([es, ec, es * ec, n])
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model([s, c, n], out)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def train(data, folder):
    model = build_model()
    saver = TimedSaver(folder)
    if isinstance(data, tf.data.Dataset):
        model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[saver], verbose=0)
    else:
        model.fit(data[0], data[1], batch_size=BATCH, epochs=EPOCHS, callbacks=[saver], verbose=0)
    return saver.seconds_per_step(), saver


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u56_checkpoint_kerasarchive_everybatch_couponredemption_")
    try:
        t0 = time.perf_counter()
        x, y = make_data(5)
        full, saver = train((x, y), tmp)
        wall = time.perf_counter() - _T0
        report("steps_per_second", 1.0 / full)
        msg = "full %.1f ms/step, %d saves %.1f s of %.1f s (%.0f%%)" % (
            full * 1e3, saver.saves, saver.save_seconds, wall, 100 * saver.save_seconds / wall)
        if truth:
            batch = ({k: tf.constant(v[:BATCH]) for k, v in x.items()}, tf.constant(y[:BATCH]))
            comp, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), tmp)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += " compute %.1f ms/step truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("checkpoint_kerasarchive_everybatch_couponredemption: %s (%.1f s)" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
