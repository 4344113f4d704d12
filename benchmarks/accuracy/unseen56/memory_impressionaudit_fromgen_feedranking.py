"""Social-commerce feed ranking with an impression audit log that is never trimmed.

A Python generator samples feed impressions (user/post ids, 256 dense
engagement features) from in-memory NumPy tables and feeds model.fit via
tf.data.Dataset.from_generator. For "offline replay" it also appends a float64
copy of every served batch to an audit list that nobody clears, so resident
memory grows steadily for the whole run.
"""
import os
import sys
import json
import time
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 1024
STEPS = 210
EPOCHS = 3
N_FEAT = 256
N_USERS = 50000
N_POSTS = 100000


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


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


class ImpressionFeed:
    def __init__(self, seed):
        rng = np.random.default_rng(seed)
        self.user_vec = rng.standard_normal((N_USERS, N_FEAT // 2), dtype=np.float32)
        self.post_vec = rng.standard_normal((N_POSTS, N_FEAT // 2), dtype=np.float32)
        self.rng = np.random.default_rng(seed + 1)
        self.audit = []   # every served batch, kept for offline replay

    def __call__(self):
        while True:
            u = self.rng.integers(0, N_USERS, BATCH)
            p = self.rng.integers(0, N_POSTS, BATCH)
            x = np.concatenate([self.user_vec[u], self.post_vec[p]], 1)
            y = (np.sum(self.user_vec[u, :8] * self.post_vec[p, :8], 1) > 0).astype(np.float32)
            self.audit.append({"users": u.copy(), "posts": p.copy(), "features": x.astype(np.float64),
                               "labels": y.copy(), "served_at": time.time()})
            yield x, y


def make_dataset(feed):
    return tf.data.Dataset.from_generator(
        feed, output_signature=(tf.TensorSpec((BATCH, N_FEAT), tf.float32),
                                tf.TensorSpec((BATCH,), tf.float32))).prefetch(2)


def build_model():
    keras.utils.set_random_seed(43)
    inp = keras.Input((N_FEAT,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return model


def rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u56_memory_impressionaudit_fromgen_feedranking_")
    try:
        t0 = time.perf_counter()
        feed = ImpressionFeed(7)
        full = train(make_dataset(feed))
        rss = rss_mib()
        report("steps_per_second", 1.0 / full)
        msg = "full %.1f ms/step, audit %d batches, RSS %.0f MiB" % (full * 1e3, len(feed.audit), rss)
        if truth:
            x, y = next(ImpressionFeed(7)())
            feed.audit.clear()
            comp = train(tf.data.Dataset.from_tensors((tf.constant(x), tf.constant(y))).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += " compute %.1f ms/step truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("memory_impressionaudit_fromgen_feedranking: %s (%.1f s)" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
