"""Healthcare: ICU deterioration model. tf.data interleaves shards of CSV-like
bedside-monitor exports; each shard is parsed by tf.py_function (csv.reader,
per-stay grouping, forward fill of missing vitals, resampling to 48 hourly
steps, normalisation) and unbatched into model.fit. Bottleneck: input."""
import os, sys, time, json, csv, io
T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS, HOURS, STAYS_PER_SHARD = 64, 40, 3, 48, 32
VITALS = ["hr", "sbp", "dbp", "spo2", "rr", "temp"]
NORM = np.array([[85, 15], [120, 18], [70, 12], [96, 3], [18, 5], [37, 0.7]], np.float32)


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def make_shards(nshards, seed=66):
    rng = np.random.default_rng(seed)
    shards = []
    for s in range(nshards):
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["stay_id", "minute"] + VITALS + ["label"])
        for k in range(STAYS_PER_SHARD):
            sid = s * 1000 + k
            bad = int(rng.random() < 0.35)
            minutes = np.sort(rng.choice(HOURS * 60, 48, replace=False))
            drift = np.linspace(0, 1, 48)[:, None] * (bad * np.array([25, -25, -10, -5, 8, 1.0]))
            vals = NORM[:, 0] + rng.normal(0, 1, (48, 6)) * NORM[:, 1] * 0.5 + drift
            for m, v in zip(minutes, vals):
                row = [sid, int(m)] + [("" if rng.random() < 0.15 else f"{x:.1f}") for x in v] + [bad]
                w.writerow(row)
        shards.append(buf.getvalue())
    return shards


def parse_shard(text):
    rows = csv.reader(io.StringIO(text.numpy().decode()))
    next(rows)  # header
    stays = {}
    for r in rows:
        stays.setdefault(r[0], []).append(r)
    xs, ys = [], []
    for sid, recs in stays.items():
        grid = [[None] * 6 for _ in range(HOURS)]
        for r in recs:
            h = int(r[1]) // 60
            for j in range(6):
                v = r[2 + j]
                if v != "":
                    grid[h][j] = float(v)
        prev = [float(NORM[j, 0]) for j in range(6)]
        for h in range(HOURS):  # forward fill across hours (first value: population mean)
            row = grid[h]
            for j in range(6):
                if row[j] is None:
                    row[j] = prev[j]
                else:
                    prev[j] = row[j]
        xs.append((np.array(grid, np.float32) - NORM[:, 0]) / NORM[:, 1])
        ys.append(float(recs[0][-1]))
    return np.stack(xs).astype(np.float32), np.array(ys, np.float32)


def build_model():
    inp = keras.Input((HOURS, 6))
    h = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(inp)
    h = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    out = keras.layers.Dense(1, activation="sigmoid")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(ds):
    keras.utils.set_random_seed(66)
    m = build_model()
    t = StepTimer()
    m.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t], verbose=0)
    return t.sec_per_step()


def main():
    nshards = BATCH * STEPS // STAYS_PER_SHARD
    shards = make_shards(nshards)
    def load(text):
        x, y = tf.py_function(parse_shard, [text], [tf.float32, tf.float32])
        x.set_shape((None, HOURS, 6)); y.set_shape((None,))
        return tf.data.Dataset.from_tensor_slices((x, y))
    ds = (tf.data.Dataset.from_tensor_slices(shards).repeat()
          .interleave(load, cycle_length=4, block_length=8, num_parallel_calls=2)
          .batch(BATCH).prefetch(2))
    full = run(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"[input_interleavepyfunc_icuvitals] full {full*1000:.1f} ms/step"
    if TRUTH:
        x, y = parse_shard(tf.constant(shards[0]))
        x2, y2 = parse_shard(tf.constant(shards[1]))
        batch = (np.concatenate([x, x2])[:BATCH], np.concatenate([y, y2])[:BATCH])
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth_input_fraction {f:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
