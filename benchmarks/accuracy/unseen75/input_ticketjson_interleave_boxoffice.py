"""Theatre box office: predict whether a performance sells out from the
ticketing system's nightly JSONL exports. Shard files are written to a temp dir;
tf.data interleaves TextLineDatasets over the shards, batches the raw lines and
calls tf.py_function to json.loads each performance, rasterise the sold-seat
list onto a stalls/circle seat map, bucket prices and parse the curtain time;
it feeds model.fit. Intended bottleneck: INPUT (py_function JSON/seat parsing)."""
import time
T0 = time.perf_counter()
import os, sys, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

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


def report(name, full, compute=None, extra=""):
    emit({"steps_per_second": 1.0 / full})
    line = f"[{name}] sec/step={full*1000:.1f}ms steps/s={1.0/full:.2f}"
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        line += f" compute={compute*1000:.1f}ms truth_input_fraction={frac:.3f}"
    line += f" wall={time.perf_counter()-T0:.1f}s {extra}"
    print(line, flush=True)
import datetime

SEED, BATCH, STEPS, EPOCHS = 75, 64, 80, 3
ROWS, SEATS, NSHARDS, PER_SHARD = 12, 30, 8, 100
NFEAT = ROWS * SEATS + 40
ROW_NAMES = [chr(ord("A") + r) for r in range(ROWS)]
SHOWS = ["Hamlet", "The Seagull", "Oklahoma!", "Cats", "Waiting for Godot", "Medea", "Company"]


def write_shards(d, rng):
    files = []
    for s in range(NSHARDS):
        p = os.path.join(d, f"boxoffice-{s:03d}.jsonl")
        with open(p, "w") as fh:
            for i in range(PER_SHARD):
                fill = rng.uniform(0.2, 1.0)
                mask = rng.random(ROWS * SEATS) < fill
                sold = [f"{ROW_NAMES[k // SEATS]}{k % SEATS + 1}" for k in np.flatnonzero(mask)]
                rec = {"show": str(rng.choice(SHOWS)), "venue": "Lyric", "perf": (
                    datetime.datetime(2026, 1, 1, 19, 30) + datetime.timedelta(days=int(rng.integers(300)),
                                                                               hours=int(rng.choice([-5, 0])))).isoformat(),
                       "sold": sold, "prices": {s_: round(float(rng.uniform(15, 120)), 2) for s_ in sold[::5]},
                       "comps": int(rng.integers(0, 20)), "sellout": bool(fill > 0.85)}
                fh.write(json.dumps(rec) + "\n")
        files.append(p)
    return files


def parse_lines(lines):
    xs, ys = [], []
    for raw in lines.numpy():
        rec = json.loads(raw.decode("utf-8"))
        v = np.zeros(NFEAT, np.float32)
        for seat in rec["sold"]:
            r = ROW_NAMES.index(seat[0])
            v[r * SEATS + int(seat[1:]) - 1] = 1.0
        prices = sorted(rec["prices"].values())
        if prices:
            hist, _ = np.histogram(prices, bins=20, range=(0, 130))
            v[ROWS * SEATS:ROWS * SEATS + 20] = hist / max(len(prices), 1)
        t = datetime.datetime.fromisoformat(rec["perf"])
        v[ROWS * SEATS + 20 + t.weekday()] = 1.0
        v[ROWS * SEATS + 27] = 1.0 if t.hour < 17 else 0.0
        v[ROWS * SEATS + 28 + SHOWS.index(rec["show"])] = 1.0
        v[ROWS * SEATS + 35] = rec["comps"] / 20.0
        xs.append(v)
        ys.append(1.0 if rec["sellout"] else 0.0)
    return np.stack(xs), np.array(ys, np.float32)


def tf_parse(lines):
    x, y = tf.py_function(parse_lines, [lines], (tf.float32, tf.float32))
    x.set_shape((None, NFEAT))
    y.set_shape((None,))
    return x, y


def make_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((NFEAT,)), keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(512, activation="relu"), keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def run(ds):
    model, timer = make_model(), StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    tmp = tempfile.mkdtemp(prefix="u75_input_ticketjson_interleave_boxoffice_")
    try:
        t = time.perf_counter()
        files = write_shards(tmp, np.random.default_rng(SEED))
        prep = time.perf_counter() - t
        ds = (tf.data.Dataset.from_tensor_slices(files).repeat()
              .interleave(tf.data.TextLineDataset, cycle_length=4, block_length=8)
              .batch(BATCH).map(tf_parse).prefetch(2))
        full = run(ds)
        compute = None
        if TRUTH:
            one = next(iter(ds))
            compute = run(tf.data.Dataset.from_tensors(one).repeat())
        report("input_ticketjson_interleave_boxoffice", full, compute, f"shard_write={prep:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
