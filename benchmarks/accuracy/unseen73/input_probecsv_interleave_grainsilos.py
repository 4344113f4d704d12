"""Grain elevator storage: predicts spoilage risk in silos from moisture/
temperature probe-cable CSV shards.  Input path: tf.data list of CSV shards ->
interleave(TextLineDataset) -> batch raw lines -> map(tf.py_function) that
splits each CSV line in Python, converts probe resistance to grain moisture via
the Henderson equilibrium equation and computes per-cable hot-spot features.
Deliberate bottleneck: input."""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


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


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true",
                    help="also train on one reused in-memory batch and report the input fraction")
    return ap.parse_args()
import math

BATCH = 64
EPOCHS = 5
STEPS = 50
SENSORS = 40
SHARDS = 6
ROWS = 700


def write_shards(root, seed=66):
    rng = np.random.default_rng(seed)
    paths = []
    for s in range(SHARDS):
        p = os.path.join(root, f"silo_probes_{s:02d}.csv")
        with open(p, "w") as fh:
            for r in range(ROWS):
                risk = int(rng.random() < 0.25)
                temps = 12 + rng.normal(0, 1.5, SENSORS) + (6 * np.exp(-((np.arange(SENSORS) - rng.integers(0, SENSORS)) ** 2) / 8.0) if risk else 0)
                res = rng.uniform(2e5, 8e6, SENSORS) / (1.5 if risk else 1.0)
                fields = [f"SILO{s:02d}", f"CABLE{r % 9}", f"2026-09-{1 + r % 28:02d} {r % 24:02d}:00", str(risk)]
                fields += [f"{t:.2f}C" for t in temps] + [f"{x:.0f}ohm" for x in res]
                fh.write(",".join(fields) + "\n")
        paths.append(p)
    return paths


def parse_lines(lines):
    xs, ys = [], []
    for raw in lines.numpy():
        f = raw.decode("ascii").split(",")
        ys.append(float(f[3]))
        temps = [float(v[:-1]) for v in f[4:4 + SENSORS]]
        res = [float(v[:-3]) for v in f[4 + SENSORS:4 + 2 * SENSORS]]
        row = []
        for t, r in zip(temps, res):
            rh = min(0.99, max(0.05, 1.2 - 0.12 * math.log10(r)))
            # Henderson equilibrium moisture content (wheat constants)
            henderson = (math.log(1 - rh) / (-2.31e-5 * (t + 55.8))) ** (1 / 2.28) / 100.0
            chung = (0.6 - math.log(-(t + 50.0) * math.log(rh) / 900.0) / 19.0)
            oswin = 0.15 * (rh / (1 - rh)) ** 0.3 * (1 - 0.004 * t)
            emc = (henderson + chung / 3.0 + oswin) / 3.0
            row.append((t - 12.0) / 5.0); row.append(emc * 5.0)
        mean_t = sum(temps) / SENSORS
        row.append((max(temps) - mean_t) / 5.0)
        row.append(max(abs(temps[k + 1] - temps[k]) for k in range(SENSORS - 1)) / 5.0)
        # hot-spot score: 5-sensor moving window along the cable
        best = 0.0
        for k in range(SENSORS - 4):
            w = temps[k:k + 5]
            best = max(best, sum(w) / 5.0 - mean_t, (max(w) - min(w)) / 5.0)
        row[-1] += best / 5.0
        xs.append(row)
    return np.asarray(xs, np.float32), np.asarray(ys, np.float32)[:, None]


def make_dataset(paths):
    files = tf.data.Dataset.from_tensor_slices(paths).repeat()
    lines = files.interleave(tf.data.TextLineDataset, cycle_length=3, block_length=16)

    def fn(batch):
        x, y = tf.py_function(parse_lines, [batch], (tf.float32, tf.float32))
        x.set_shape((None, 2 * SENSORS + 2)); y.set_shape((None, 1))
        return x, y
    return lines.batch(BATCH, drop_remainder=True).map(fn).prefetch(1)


def build_model():
    m = keras.Sequential([keras.Input((2 * SENSORS + 2,)),
                          keras.layers.Dense(768, activation="relu"),
                          keras.layers.Dense(384, activation="relu"),
                          keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy")
    return m


def train(ds):
    keras.utils.set_random_seed(12)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    args = parse_args()
    root = tempfile.mkdtemp(prefix="u73_input_probecsv_interleave_grainsilos_")
    try:
        ds = make_dataset(write_shards(root))
        full = train(ds)
        emit({"steps_per_second": 1.0 / full})
        print(f"[grainsilos] full run: {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, wall {time.perf_counter() - _T0:.1f}s")
        if args.truth:
            batch = next(iter(ds))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = input_fraction(full, compute)
            emit({"truth_input_fraction": frac})
            print(f"[grainsilos] truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
