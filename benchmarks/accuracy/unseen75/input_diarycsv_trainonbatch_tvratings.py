"""Television audience measurement: predict a household's dominant genre next
week from its paper-diary returns. Each household's diary arrives as CSV text
(household, date, quarter-hour start/end, channel, programme, persons viewing);
Python parses it with the csv module, validates quarter-hours, and rasterises a
96 quarter-hour x 12 channel viewing grid per day-part; model.train_on_batch is
called from the Python loop. Intended bottleneck: INPUT (CSV diary parsing)."""
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
import csv
import io

SEED, BATCH, STEPS, EPOCHS = 75, 48, 100, 3
NCH, NQH, NCLS, ROWS = 12, 96, 6, 30
CHANNELS = [f"CH{c:02d}" for c in range(NCH)]
PROGS = ["news", "soap", "quiz", "drama", "sport", "kids", "film", "docu", "reality", "late"]


def make_diaries(n, rng):
    out, labels = [], []
    for h in range(n):
        lab = int(rng.integers(NCLS))
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["household", "date", "qh_start", "qh_end", "channel", "programme", "persons"])
        for r in range(ROWS):
            start = int(rng.integers(0, NQH - 4))
            ch = lab * 2 + int(rng.integers(2)) if rng.random() < 0.5 else int(rng.integers(NCH))
            w.writerow([f"HH{h:05d}", f"2026-02-{1 + r % 7:02d}", start, start + int(rng.integers(1, 5)),
                        CHANNELS[ch], PROGS[int(rng.integers(len(PROGS)))], int(rng.integers(1, 5))])
        out.append(buf.getvalue())
        labels.append(lab)
    return out, np.array(labels, np.int32)


def parse_diary(text):
    grid = np.zeros((7, NQH, NCH), np.float32)
    rd = csv.DictReader(io.StringIO(text))
    for row in rd:
        d = int(row["date"][-2:]) - 1
        a, b = int(row["qh_start"]), int(row["qh_end"])
        if not (0 <= a < b <= NQH):
            continue
        c = CHANNELS.index(row["channel"])
        for q in range(a, b):
            grid[d % 7, q, c] += int(row["persons"])
    # collapse the week into 4 day-parts x channels + full quarter-hour profile
    dayparts = grid.sum(0).reshape(4, NQH // 4, NCH).sum(1).ravel()
    profile = grid.sum((0, 2))
    return np.concatenate([grid.sum(0).ravel() / 7.0, dayparts / 50.0, profile / 20.0])


NFEAT = NQH * NCH + 4 * NCH + NQH


def make_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((NFEAT,)), keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(256, activation="relu"), keras.layers.Dense(NCLS)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(batches):
    model = make_model()
    gaps = []
    for ep in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = batches(ep * STEPS + s)
            loss = float(model.train_on_batch(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return sec_per_step(gaps), loss


def main():
    rng = np.random.default_rng(SEED)
    diaries, labels = make_diaries(900, rng)

    def from_diaries(i):
        idx = [(i * BATCH + j) % len(diaries) for j in range(BATCH)]
        return np.stack([parse_diary(diaries[k]) for k in idx]), labels[idx]

    full, loss = train(from_diaries)
    compute = None
    if TRUTH:
        one = from_diaries(0)
        compute, _ = train(lambda i: one)
    report("input_diarycsv_trainonbatch_tvratings", full, compute, f"loss={loss:.3f}")


if __name__ == "__main__":
    main()
