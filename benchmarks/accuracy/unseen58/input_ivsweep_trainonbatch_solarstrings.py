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

"""PV string fault diagnosis from binary I-V sweep records.

Inverters upload I-V sweeps as packed binary records (struct header with
string id, irradiance, module temperature, point count, then int16 voltage /
current pairs). A Python loop calls model.train_on_batch: for every batch it
unpacks records with struct, converts to physical units, corrects to STC,
locates the maximum-power point and fill factor, and resamples the curve to
64 points with np.interp. Faults: shading, soiling, degradation, bypass diode.
Bottleneck: per-record struct unpacking and curve processing in Python.
"""
import struct

SEED = 58
BATCH = 64
STEPS = 300
N_REC = 3000
PTS = 64
N_CLASSES = 5
HDR = struct.Struct("<8sffH")

rng = np.random.default_rng(SEED)


def make_record(i, r):
    fault = int(r.integers(0, N_CLASSES))
    g = float(r.uniform(300, 1100))
    tm = float(r.uniform(10, 65))
    n = int(r.integers(400, 600))
    v = np.linspace(0, 800, n)
    isc = 9.5 * g / 1000
    voc = 780 - 2.2 * (tm - 25)
    i_curve = isc * (1 - np.exp((v - voc) / 28.0))
    if fault == 1:
        i_curve = np.where(v > voc * 0.55, i_curve * 0.6, i_curve)
    elif fault == 2:
        i_curve *= 0.85
    elif fault == 3:
        i_curve = isc * 0.93 * (1 - np.exp((v - voc * 0.95) / 40.0))
    elif fault == 4:
        i_curve = np.where(v > voc * 0.3, i_curve - 0.8, i_curve)
    i_curve = np.clip(i_curve + r.normal(0, 0.03, n), 0, None)
    payload = b"".join(struct.pack("<hh", int(vv * 40), int(ii * 2000)) for vv, ii in zip(v, i_curve))
    return HDR.pack(b"STR%05d" % i, g, tm, n) + payload, fault


RECORDS = [make_record(i, rng) for i in range(N_REC)]


def decode(blob):
    sid, g, tm, n = HDR.unpack_from(blob, 0)
    vs, cs = [], []
    off = HDR.size
    for _ in range(n):
        vv, ii = struct.unpack_from("<hh", blob, off)
        off += 4
        vs.append(vv / 40.0)
        cs.append(ii / 2000.0)
    v = np.array(vs)
    c = np.array(cs)
    # STC correction (irradiance and temperature)
    c_stc = c * 1000.0 / max(g, 1.0)
    v_stc = v + 2.2 * (tm - 25.0)
    p = v_stc * c_stc
    k = int(np.argmax(p))
    isc, voc = c_stc[0], v_stc[np.nonzero(c_stc > 0.05)[0][-1]] if (c_stc > 0.05).any() else v_stc[-1]
    ff = p[k] / max(isc * voc, 1e-6)
    grid = np.linspace(0, 800, PTS)
    curve = np.interp(grid, v_stc, c_stc) / 10.0
    dcurve = np.gradient(curve)
    extra = np.array([ff, p[k] / 7500.0, v_stc[k] / 800.0, isc / 10.0, voc / 800.0, g / 1100.0, tm / 65.0])
    return np.concatenate([curve, dcurve * 10, extra]).astype(np.float32)


FEAT = PTS * 2 + 7


def make_batch(r):
    idx = r.integers(0, N_REC, BATCH)
    x = np.stack([decode(RECORDS[i][0]) for i in idx])
    y = np.array([RECORDS[i][1] for i in idx], np.int32)
    return x, y


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((FEAT,)),
                          keras.layers.Dense(384, activation="relu"),
                          keras.layers.Dense(384, activation="relu"),
                          keras.layers.Dense(192, activation="relu"),
                          keras.layers.Dense(N_CLASSES, activation="softmax")])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def run(batch_source):
    model = build_model()
    gaps, last = [], None
    for step in range(STEPS):
        x, y = batch_source()
        loss = float(model.train_on_batch(x, y))
        t = time.perf_counter()
        if last is not None:
            gaps.append(t - last)
        last = t
    return sec_per_step(gaps), loss


r = np.random.default_rng(SEED + 1)
print(f"setup done at {time.perf_counter()-WALL0:.1f} s")
full, loss = run(lambda: make_batch(r))
emit({"steps_per_second": 1.0 / full})
print(f"input_ivsweep_trainonbatch_solarstrings: {full*1000:.1f} ms/step, "
      f"{1.0/full:.2f} steps/s, loss {loss:.4f}, wall {time.perf_counter()-WALL0:.1f} s")
if TRUTH:
    fixed = make_batch(np.random.default_rng(SEED + 2))
    compute, _ = run(lambda: fixed)
    emit_truth(full, compute)
