"""Trade-surveillance (spoofing) classifier trained on raw FIX 4.4 drop-copy logs.

A synthetic day of FIX execution reports (tag=value fields separated by SOH)
is written to a .log file together with a byte-offset index per account window.
A keras.utils.PyDataset seeks into the log for each window, validates the
BodyLength/CheckSum trailer, parses the tag=value pairs and SendingTime stamps
and turns each window of messages into a feature sequence for model.fit.
"""
import datetime as dt
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

SOH = "\x01"
WINDOW = 48
N_WINDOWS = 1200
BATCH = 64
STEPS = 70
EPOCHS = 2
FEATS = 10


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def fix_message(fields):
    body = SOH.join(f"{k}={v}" for k, v in fields) + SOH
    head = f"8=FIX.4.4{SOH}9={len(body)}{SOH}"
    chk = sum((head + body).encode()) % 256
    return f"{head}{body}10={chk:03d}{SOH}"


def write_log(path, rng):
    t = dt.datetime(2026, 3, 2, 9, 30)
    offsets, labels = [], []
    with open(path, "w", newline="") as fh:
        for w in range(N_WINDOWS):
            spoof = int(rng.random() < 0.3)
            start = fh.tell()
            px = 100 + rng.normal(0, 2)
            acct = f"ACC{rng.integers(1000, 9999)}"
            for i in range(WINDOW):
                t += dt.timedelta(milliseconds=int(rng.exponential(40 if spoof else 250)))
                cancel = spoof and rng.random() < 0.7
                qty = int(rng.integers(1, 50) * (20 if spoof and not cancel else 1) * 100)
                fields = [("35", "8"), ("49", "BROKER"), ("56", "SURV"), ("34", w * WINDOW + i),
                          ("52", t.strftime("%Y%m%d-%H:%M:%S.%f")[:-3]), ("1", acct),
                          ("11", f"O{w}-{i}"), ("17", f"E{w}-{i}"),
                          ("150", "4" if cancel else rng.choice(["0", "1", "2"])),
                          ("39", "4" if cancel else "0"), ("54", rng.choice(["1", "2"])),
                          ("38", qty), ("44", f"{px + rng.normal(0, 0.05):.4f}"),
                          ("40", rng.choice(["1", "2"])), ("59", "0"), ("55", "XYZ")]
                fh.write(fix_message(fields) + "\n")
            offsets.append((start, fh.tell() - start))
            labels.append(spoof)
    return offsets, np.array(labels, dtype=np.int64)


def parse_window(raw):
    rows, prev = [], None
    for line in raw.splitlines():
        head, _, trailer = line.rpartition(f"10=")
        if sum(head.encode()) % 256 != int(trailer.rstrip(SOH)):
            continue
        tags = dict(kv.split("=", 1) for kv in head.rstrip(SOH).split(SOH))
        ts = dt.datetime.strptime(tags["52"], "%Y%m%d-%H:%M:%S.%f")
        gap = 0.0 if prev is None else (ts - prev).total_seconds()
        prev = ts
        rows.append([float(tags["38"]) / 1e4, float(tags["44"]), float(tags["54"] == "1"),
                     float(tags["150"] == "4"), float(tags["150"] == "2"), float(tags["40"] == "2"),
                     np.log1p(gap * 1000), float(int(tags["9"])) / 200.0,
                     float(tags["39"] == "0"), float(int(tags["34"]) % 7) / 7.0])
    a = np.asarray(rows, dtype=np.float32)
    a[:, 1] -= a[:, 1].mean()
    out = np.zeros((WINDOW, FEATS), np.float32)
    out[:len(a)] = a[:WINDOW]
    return out


class FixWindows(keras.utils.PyDataset):
    def __init__(self, path, offsets, labels, seed):
        super().__init__()
        self.path, self.offsets, self.labels = path, offsets, labels
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        pick = self.rng.integers(0, len(self.offsets), BATCH)
        xs = []
        with open(self.path, "r", newline="") as fh:
            for p in pick:
                start, n = self.offsets[p]
                fh.seek(start)
                xs.append(parse_window(fh.read(n)))
        return np.stack(xs), self.labels[pick]


def build_model():
    inp = keras.Input((WINDOW, FEATS))
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.GRU(96)(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def train(data):
    keras.utils.set_random_seed(11)
    model = build_model()
    timer = StepTimer()
    kw = {} if isinstance(data, keras.utils.PyDataset) else {"steps_per_epoch": STEPS}
    model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0, **kw)
    return timer.sec_per_step()


def append(rec):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u54_input_fixtagvalue_pydataset_tradesurveillance_")
    try:
        rng = np.random.default_rng(54)
        path = os.path.join(tmp, "dropcopy_20260302.log")
        offsets, labels = write_log(path, rng)
        seq = FixWindows(path, offsets, labels, seed=3)
        full = train(seq)
        append({"steps_per_second": 1.0 / full})
        msg = f"full {full*1000:.1f} ms/step"
        if "--truth" in sys.argv:
            xb, yb = seq[0]
            comp = train(tf.data.Dataset.from_tensors((xb, yb)).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append({"truth_input_fraction": frac})
            msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(f"input_fixtagvalue_pydataset_tradesurveillance: {msg}, wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
