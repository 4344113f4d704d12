"""Ice-rink resurfacing logs: CSV shards of ice-resurfacer passes are written
to a temp dir, then read back by tf.py_function inside a serial tf.data
interleave (cycle_length=4) and parsed row by row in Python for model.fit."""
import time; T0 = time.perf_counter()
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


N_SHARDS = 32
ROWS_PER_SHARD = 400
PROBES = 60                # ice thickness probe points across the sheet
FEAT = 8 + PROBES + 7
BATCH = 128
STEPS = 200
EPOCHS = 4
RINKS = ("north", "south", "curling", "practice")


def write_shards(root, seed=89):
    rng = np.random.default_rng(seed)
    paths = []
    for s in range(N_SHARDS):
        p = os.path.join(root, "resurface-%03d.csv" % s)
        with open(p, "w") as fh:
            fh.write("ts,rink,water_c,litres,blade_mm,speed_kmh,ambient_c,humidity,passes,"
                     + ",".join("probe%02d_mm" % k for k in range(PROBES)) + "\n")
            for r in range(ROWS_PER_SHARD):
                probes = rng.normal(38.0, 3.0, PROBES)
                fh.write("2026-01-%02dT%02d:%02d:00,%s,%.1f,%.0f,%.2f,%.1f,%.1f,%.0f,%d,%s\n" % (
                    1 + (r % 28), 6 + (r % 16), r % 60, RINKS[r % 4],
                    rng.uniform(55, 70), rng.uniform(300, 800), rng.uniform(0.5, 3.0),
                    rng.uniform(6, 12), rng.uniform(-2, 14), rng.uniform(30, 80),
                    int(rng.integers(1, 4)), ",".join("%.2f" % v for v in probes)))
        paths.append(p)
    return paths


def read_shard(path):
    xs, ys = [], []
    with open(path.numpy().decode(), "r") as fh:
        next(fh)
        for line in fh:
            f = line.rstrip("\n").split(",")
            day = int(f[0][8:10])
            hour = int(f[0][11:13])
            rink = RINKS.index(f[1])
            water, litres, blade, speed, amb, hum = (float(v) for v in f[2:8])
            passes = int(f[8])
            probes = [float(v) for v in f[9:9 + PROBES]]
            mean = sum(probes) / PROBES
            var = sum((p - mean) ** 2 for p in probes) / PROBES
            rough = sum(abs(probes[k + 1] - probes[k]) for k in range(PROBES - 1))
            thin = sum(1 for p in probes if p < 34.0)
            # Gini mean difference across all probe pairs = sheet flatness
            gmd = 0.0
            for a in range(PROBES):
                pa = probes[a]
                for b in range(a + 1, PROBES):
                    gmd += abs(pa - probes[b])
            gmd /= PROBES * (PROBES - 1) / 2.0
            row = [day / 31.0, hour / 24.0, rink / 3.0, (water - 60) / 10, litres / 800.0,
                   blade / 3.0, speed / 12.0, (amb - 5) / 10]
            row += [(p - 38.0) / 3.0 for p in probes]
            row += [(mean - 38.0) / 3.0, var ** 0.5 / 3.0, rough / 40.0, thin / PROBES,
                    hum / 100.0, passes / 3.0, gmd / 4.0]
            quality = 1.0 - 0.1 * var ** 0.5 - 0.02 * thin + 0.01 * (water - 60) - 0.01 * max(amb, 0)
            xs.append(row)
            ys.append([quality])
    return np.asarray(xs, np.float32), np.asarray(ys, np.float32)


def rink_dataset(paths):
    def shard_rows(path):
        x, y = tf.py_function(read_shard, [path], [tf.float32, tf.float32])
        x.set_shape([None, FEAT])
        y.set_shape([None, 1])
        return tf.data.Dataset.from_tensor_slices((x, y))

    files = tf.data.Dataset.from_tensor_slices(paths).shuffle(N_SHARDS, seed=89).repeat()
    rows = files.interleave(shard_rows, cycle_length=4, block_length=16)
    return rows.batch(BATCH, drop_remainder=True)


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

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


def build_model():
    keras.utils.set_random_seed(89)
    inp = keras.Input((FEAT,))
    x = keras.layers.Dense(512, activation="gelu")(inp)
    x = keras.layers.Dense(512, activation="gelu")(x)
    x = keras.layers.Dense(256, activation="gelu")(x)
    out = keras.layers.Dense(1)(x)
    model = keras.Model(inp, out, name="ice_quality")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), time.perf_counter() - t


def main():
    root = tempfile.mkdtemp(prefix="u89_rinklogs_")
    try:
        paths = write_shards(root)
        full, fit_s = train(rink_dataset(paths))
        emit({"steps_per_second": 1.0 / full})
        print("rinklogs normal: %.4f s/step, fit %.1f s, wall %.1f s" % (full, fit_s, time.perf_counter() - T0))
        if TRUTH:
            xb, yb = next(iter(rink_dataset(paths)))
            comp, _ = train(tf.data.Dataset.from_tensors((xb, yb)).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print("rinklogs truth: compute %.4f s/step, full %.4f s/step, input fraction %.3f" % (comp, full, frac))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
