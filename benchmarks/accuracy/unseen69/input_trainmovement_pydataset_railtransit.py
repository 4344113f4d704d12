"""Regional rail arrival-delay regression from raw train-movement event logs.

Input path: a keras.utils.PyDataset whose __getitem__ parses pipe-delimited
train-movement records (TRUST-style): splits fields, parses scheduled and
actual timestamps with datetime.strptime, decodes key=value remarks, and builds
a per-run stop sequence. Feeds model.fit (workers=1, synchronous).
"""
import time
_T0 = time.perf_counter()
import argparse, json, os
from datetime import datetime
import numpy as np
import tensorflow as tf
import keras

N_RUNS = 600
STOPS = 24           # events per train run (Python parse cost knob)
BATCH = 64
EPOCHS = 3
STEPS = 40
FMT = "%Y-%m-%d %H:%M:%S"


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_logs(seed=69):
    rng = np.random.default_rng(seed)
    runs, targets = [], []
    for r in range(N_RUNS):
        t = 6 * 3600 + int(rng.integers(0, 14 * 3600))
        delay = 0
        lines = []
        for s in range(STOPS):
            t += int(rng.integers(120, 600))
            delay = max(0, delay + int(rng.normal(5, 40)))
            dwell = int(rng.integers(20, 120))
            load = rng.random()
            sch = datetime(2026, 3, 1 + r % 28, t // 3600 % 24, t // 60 % 60, t % 60)
            act = datetime.fromtimestamp(sch.timestamp() + delay)
            lines.append(f"RUN{r:05d}|STN{int(rng.integers(0, 400)):03d}|{sch.strftime(FMT)}|"
                         f"{act.strftime(FMT)}|{'DEP' if s % 2 else 'ARR'}|"
                         f"platform={int(rng.integers(1, 9))};dwell={dwell};load={load:.3f};door={int(rng.integers(0, 2))}")
        runs.append("\n".join(lines))
        targets.append(delay / 60.0 + 3.0 * load)
    return runs, np.asarray(targets, np.float32)


def parse_run(text):
    rows = []
    prev = None
    for line in text.split("\n"):
        run, stn, sch, act, kind, rem = line.split("|")
        ts = datetime.strptime(sch, FMT); ta = datetime.strptime(act, FMT)
        kv = dict(p.split("=") for p in rem.split(";"))
        d = (ta - ts).total_seconds() / 60.0
        gap = 0.0 if prev is None else (ts - prev).total_seconds() / 600.0
        prev = ts
        rows.append([d, gap, float(kv["dwell"]) / 60.0, float(kv["load"]),
                     float(kv["platform"]) / 8.0, 1.0 if kind == "DEP" else 0.0])
    return rows


class MovementData(keras.utils.PyDataset):
    def __init__(self, runs, y, **kw):
        super().__init__(**kw)
        self.runs, self.y = runs, y
    def __len__(self):
        return STEPS
    def __getitem__(self, idx):
        i0 = (idx * BATCH) % (N_RUNS - BATCH)
        x = np.asarray([parse_run(self.runs[i]) for i in range(i0, i0 + BATCH)], np.float32)
        return x, self.y[i0:i0 + BATCH]


def build_model():
    inp = keras.Input((STOPS, 6))
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x))
    m.compile(optimizer="adam", loss="mse")
    return m


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    keras.utils.set_random_seed(69)
    runs, y = make_logs()
    data = MovementData(runs, y)
    timer = StepTimer(); model = build_model()
    model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    print(f"[trainmovement_pydataset] full {full*1000:.1f} ms/step, {1/full:.2f} steps/s, wall {time.perf_counter()-_T0:.1f}s")
    if args.truth:
        xb, yb = data[0]
        tds = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        t2 = StepTimer(); m2 = build_model()
        m2.fit(tds, steps_per_epoch=len(data), epochs=EPOCHS, callbacks=[t2], verbose=0)
        comp = t2.sec_per_step()
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"[trainmovement_pydataset] truth compute {comp*1000:.1f} ms/step, input fraction {f:.3f}, wall {time.perf_counter()-_T0:.1f}s")


if __name__ == "__main__":
    main()
