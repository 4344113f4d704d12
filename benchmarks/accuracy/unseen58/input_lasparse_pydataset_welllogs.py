import time
WALL0 = time.perf_counter()
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


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def emit_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full={full*1000:.1f} ms/step compute={compute*1000:.1f} ms/step "
          f"truth_input_fraction={frac:.3f}")
    return frac

"""Lithology classification from LAS 2.0 well-log files.

Each sample is a raw LAS text file (version/well/curve sections plus an ~A
ASCII data block of depth, GR, RHOB, NPHI, DT, RT, PEF).  A keras.utils.PyDataset
parses the text in __getitem__ line by line, replaces -999.25 nulls by linear
interpolation, log-transforms resistivity, standardises and cuts a random
128-sample depth window; model.fit trains a Conv1D facies classifier.
Bottleneck: the Python LAS parsing inside PyDataset.__getitem__.
"""
SEED = 58
BATCH = 32
STEPS = 20
EPOCHS = 3
WIN = 128
N_WELLS = 60
N_DEPTH = 420
CURVES = ["GR", "RHOB", "NPHI", "DT", "RT", "PEF"]
N_CLASSES = 5
NULL = -999.25

rng = np.random.default_rng(SEED)


def make_las(i, r):
    lines = ["~VERSION INFORMATION", " VERS.   2.0 : CWLS LOG ASCII STANDARD",
             " WRAP.   NO  : ONE LINE PER DEPTH STEP", "~WELL INFORMATION",
             f" STRT.M  {1000.0:.4f} :", f" STOP.M  {1000.0 + 0.1524 * (N_DEPTH - 1):.4f} :",
             " STEP.M  0.1524 :", f" NULL.   {NULL} :", f" WELL.   WELL-{i:04d} : WELL",
             f" FLD .   BASIN-{i % 7} : FIELD", "~CURVE INFORMATION", " DEPT.M : DEPTH"]
    lines += [f" {c:<5}.unit : {c} curve" for c in CURVES]
    lines.append("~A  DEPT " + " ".join(CURVES))
    facies = np.repeat(r.integers(0, N_CLASSES, N_DEPTH // 30 + 1), 30)[:N_DEPTH]
    base = np.array([[60, 2.3, 0.25, 90, 10, 3.0]]) * (1 + 0.3 * facies[:, None] / N_CLASSES)
    vals = base + r.normal(0, 0.05, (N_DEPTH, 6)) * base
    for d in range(N_DEPTH):
        row = [NULL if r.random() < 0.02 else v for v in vals[d]]
        lines.append(f"{1000.0 + 0.1524 * d:10.4f} " + " ".join(f"{v:10.4f}" for v in row))
    return "\n".join(lines), facies.astype(np.int32)


WELLS = [make_las(i, rng) for i in range(N_WELLS)]
MEAN = np.array([70, 2.5, 0.28, 100, 2.5, 3.3], np.float32)
STD = np.array([15, 0.3, 0.07, 20, 0.5, 0.7], np.float32)


def parse_las(text):
    section = None
    header = {}
    rows = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith("~"):
            section = s[1].upper()
            continue
        if section == "W":
            key, _, rest = s.partition(".")
            val = rest.split(":")[0].split()
            header[key.strip()] = val[-1] if val else ""
        elif section == "A":
            rows.append([float(t) for t in s.split()])
    null = float(header.get("NULL", NULL))
    arr = np.array(rows, dtype=np.float64)
    depth = arr[:, 0]
    curves = arr[:, 1:]
    for c in range(curves.shape[1]):
        col = curves[:, c]
        bad = col == null
        if bad.any():
            col[bad] = np.interp(depth[bad], depth[~bad], col[~bad])
    curves[:, 4] = np.log10(np.maximum(curves[:, 4], 1e-3))
    return depth, curves.astype(np.float32)


class LasDataset(keras.utils.PyDataset):
    def __init__(self, seed):
        super().__init__()
        self.seed = seed

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        r = np.random.default_rng(self.seed * 100003 + idx)
        xs, ys = [], []
        for _ in range(BATCH):
            w = int(r.integers(0, N_WELLS))
            text, facies = WELLS[w]
            _, curves = parse_las(text)
            s = int(r.integers(0, N_DEPTH - WIN))
            xs.append((curves[s:s + WIN] - MEAN) / STD)
            ys.append(facies[s:s + WIN])
        return np.stack(xs), np.stack(ys)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((WIN, len(CURVES)))
    h = inp
    for f in (32, 48, 48, 64):
        h = keras.layers.Conv1D(f, 7, padding="same", activation="relu")(h)
    out = keras.layers.Conv1D(N_CLASSES, 1, activation="softmax")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def run(data):
    model = build_model()
    timer = StepTimer()
    if isinstance(data, tf.data.Dataset):
        model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    else:
        model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


print(f"setup done at {time.perf_counter()-WALL0:.1f} s")
full = run(LasDataset(SEED))
emit({"steps_per_second": 1.0 / full})
print(f"input_lasparse_pydataset_welllogs: {full*1000:.1f} ms/step, "
      f"{1.0/full:.2f} steps/s, wall {time.perf_counter()-WALL0:.1f} s")
if TRUTH:
    bx, by = LasDataset(SEED)[0]
    compute = run(tf.data.Dataset.from_tensors((bx, by)).repeat())
    emit_truth(full, compute)
