"""Travelling-exhibition loan risk from crate climate loggers (train_on_batch).

Data path: each loan crate's data logger exports JSON lines (timestamp,
temperature, relative humidity, lux, shock g).  A Python loop parses the
JSON text with json.loads, sorts and resamples every trace onto a fixed
hourly grid with np.interp, computes RH-change and cumulative-lux features,
and calls model.train_on_batch on each batch.  Deliberate bottleneck:
per-record JSON parsing and resampling in Python (input-bound).
"""
import os, sys, json, time, tempfile, shutil
WALL0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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
        return mean_after_warmup(self.gaps)


def report_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full={full*1000:.1f} ms/step compute={compute*1000:.1f} ms/step "
          f"truth_input_fraction={frac:.3f}")


BATCH = 32
STEPS = 40
EPOCHS = 3
READINGS = 90
GRID = 128
NCLASS = 3


def make_logs(n, seed):
    rng = np.random.default_rng(seed)
    logs, labels = [], []
    for i in range(n):
        cls = int(rng.integers(NCLASS))
        t = np.sort(rng.uniform(0, 72 * 3600, READINGS))
        rh = 50 + np.cumsum(rng.normal(0, 0.4 + 0.8 * cls, READINGS))
        temp = 20 + np.cumsum(rng.normal(0, 0.2, READINGS))
        lines = [json.dumps({"crate": f"L{i:05d}", "ts": float(a), "temp_c": round(float(b), 2),
                             "rh_pct": round(float(c), 2), "lux": float(rng.uniform(0, 50)),
                             "shock_g": round(float(abs(rng.normal(0, 0.3 + cls * 0.2))), 3)})
                 for a, b, c in zip(t, temp, rh)]
        logs.append("\n".join(lines))
        labels.append(cls)
    return logs, np.array(labels, np.int32)


def featurize(text):
    recs = [json.loads(line) for line in text.split("\n")]
    recs.sort(key=lambda r: r["ts"])
    ts = np.array([r["ts"] for r in recs])
    grid = np.linspace(ts[0], ts[-1], GRID)
    cols = []
    for key in ("temp_c", "rh_pct", "lux", "shock_g"):
        cols.append(np.interp(grid, ts, np.array([r[key] for r in recs])))
    temp, rh, lux, shock = cols
    drh = np.diff(rh, prepend=rh[0])
    cumlux = np.cumsum(lux) / 1000.0
    return np.stack([(temp - 20) / 5, (rh - 50) / 10, drh, cumlux, shock], 1).astype(np.float32)


LOGS, LABELS = make_logs(600, seed=76)


def python_batches(rng):
    while True:
        idx = rng.integers(0, len(LOGS), BATCH)
        yield np.stack([featurize(LOGS[i]) for i in idx]), LABELS[idx]


def build_model():
    inp = keras.Input((GRID, 5))
    x = keras.layers.Conv1D(32, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(32, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(NCLASS)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(batch_source):
    keras.utils.set_random_seed(76)
    model = build_model()
    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for step in range(STEPS):
            x, y = next(batch_source)
            loss = float(model.train_on_batch(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return mean_after_warmup(gaps), loss


def repeat_one(batch):
    while True:
        yield batch


def main():
    full, loss = run(python_batches(np.random.default_rng(5)))
    emit({"steps_per_second": 1.0 / full})
    print(f"exhibitloans: {1.0/full:.2f} steps/s ({full*1000:.1f} ms/step), "
          f"loss {loss:.4f}, wall {time.perf_counter()-WALL0:.1f}s")
    if TRUTH:
        batch = next(python_batches(np.random.default_rng(5)))
        compute, _ = run(repeat_one(batch))
        report_truth(full, compute)


if __name__ == "__main__":
    main()
