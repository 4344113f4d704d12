"""Last-mile route-duration prediction with a PyDataset that memoises route matrices (delivery logistics).

Data path: keras.utils.PyDataset; each __getitem__ jitters stop coordinates
(per-epoch augmentation), builds distance, travel-time and cost matrices
for every route in the batch, derives route features, and memoises the
matrices in a dict keyed by (epoch, index) "for reuse". Because the key
contains the epoch, the cache never hits and it grows every step.
Known bottleneck: memory growth of the unbounded route-matrix cache.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os

import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 30
EPOCHS = 3
STOPS = 128
NFEAT = 24


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


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


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def rss_gib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1048576
    return 0.0


class RouteDataset(keras.utils.PyDataset):
    def __init__(self, depots, **kw):
        super().__init__(**kw)
        self.depots = depots
        self.epoch = 0
        self.matrix_cache = {}

    def __len__(self):
        return STEPS

    def on_epoch_end(self):
        self.epoch += 1

    def __getitem__(self, idx):
        key = (self.epoch, idx)
        rng = np.random.default_rng(1000 * self.epoch + idx)
        d = self.depots[rng.integers(0, len(self.depots), BATCH)]
        lat = d[:, None, 0] + rng.normal(0, 0.03, (BATCH, STOPS))
        lon = d[:, None, 1] + rng.normal(0, 0.04, (BATCH, STOPS))
        la, lo = np.radians(lat), np.radians(lon)
        # equirectangular approximation (fine at city scale)
        dx = (lo[:, :, None] - lo[:, None, :]) * np.cos(la.mean(axis=1))[:, None, None]
        dy = la[:, :, None] - la[:, None, :]
        dist = 6371.0 * np.sqrt(dx * dx + dy * dy)
        speed = 18.0 + 10.0 * rng.random((BATCH, 1, 1))
        ttime = dist / speed * 60.0 + 2.5
        cost = dist * 1.35 + ttime * 0.55
        if key not in self.matrix_cache:
            self.matrix_cache[key] = (dist, ttime, cost)  # never re-hit: key includes epoch
        nn = np.partition(dist + np.eye(STOPS) * 1e9, 3, axis=2)[:, :, :3]
        nn.sort(axis=2)
        feat = np.concatenate([
            np.percentile(dist.reshape(BATCH, -1), [10, 25, 50, 75, 90], axis=1).T,
            nn.mean(axis=1), nn.std(axis=1),
            np.percentile(ttime.reshape(BATCH, -1), [10, 50, 90], axis=1).T,
            speed[:, :, 0], np.zeros((BATCH, NFEAT - 15))], axis=1).astype(np.float32)
        y = (nn[:, :, 0].sum(axis=1) / speed[:, 0, 0] * 60 + STOPS * 2.5).astype(np.float32) / 100.0
        return feat, y


def build_model():
    inp = keras.Input((NFEAT,))
    x = keras.layers.Dense(256, activation="relu")(inp)
    x = keras.layers.Dense(256, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x))
    m.compile(optimizer="adam", loss="mse")
    return m


class RssLog(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print("[routecache] epoch %d rss_gib=%.2f" % (epoch, rss_gib()))


def run(data, steps=None):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(data, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[timer, RssLog()], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    depots = np.array([[51.50, -0.12], [52.37, 4.90], [48.85, 2.35], [50.11, 8.68], [40.42, -3.70]])
    seq = RouteDataset(depots)
    t = time.perf_counter()
    full = run(seq)
    print("[routecache] steps/s=%.2f sec/step=%.4f cache_entries=%d rss_gib=%.2f train_s=%.1f" % (
        1 / full, full, len(seq.matrix_cache), rss_gib(), time.perf_counter() - t))
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        x, y = seq[0]
        comp = run(tf.data.Dataset.from_tensors((x, y)).repeat(), steps=STEPS)
        frac = min(max((full - comp) / full, 0.0), 1.0)
        print("[routecache] truth compute sec/step=%.4f input_fraction=%.3f" % (comp, frac))
        emit({"truth_input_fraction": frac})
    print("[routecache] wall_s=%.1f" % (time.perf_counter() - _T0))


if __name__ == "__main__":
    main()
