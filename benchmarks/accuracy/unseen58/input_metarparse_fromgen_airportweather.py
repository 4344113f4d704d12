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

"""Airport fog nowcasting from raw METAR reports.

A Python generator (tf.data.Dataset.from_generator) parses 36 hourly METAR
text reports per sample with regular expressions (wind, visibility, cloud
layers, temperature/dew point, altimeter) into a feature sequence; model.fit
trains a small Conv1D/GRU classifier that predicts fog in the next hour.
Bottleneck: the per-report Python regex parsing in the generator.
"""
import re

SEED = 58
BATCH = 64
STEPS = 40
EPOCHS = 2
HOURS = 36
N_STATIONS = 40
FEATS = 12

rng = np.random.default_rng(SEED)
STATIONS = ["K%03d" % i for i in range(N_STATIONS)]


def make_metar(st, day, hour, r):
    wd = int(r.integers(0, 36)) * 10
    ws = int(r.integers(0, 25))
    gust = ("G%02d" % (ws + int(r.integers(5, 15)))) if r.random() < 0.2 else ""
    vis = ["1/4SM", "1/2SM", "1SM", "3SM", "6SM", "10SM"][int(r.integers(0, 6))]
    wx = ["", "BR ", "FG ", "-RA ", "RA ", "HZ "][int(r.integers(0, 6))]
    layers = " ".join("%s%03d" % (["FEW", "SCT", "BKN", "OVC"][int(r.integers(0, 4))],
                                  int(r.integers(1, 250)))
                      for _ in range(int(r.integers(0, 4)))) or "CLR"
    t = int(r.integers(-15, 35))
    d = t - int(r.integers(0, 12))
    fmt = lambda v: ("M%02d" % -v) if v < 0 else "%02d" % v
    alt = int(r.integers(2900, 3080))
    return (f"METAR {st} {day:02d}{hour:02d}53Z {wd:03d}{ws:02d}{gust}KT {vis} {wx}"
            f"{layers} {fmt(t)}/{fmt(d)} A{alt} RMK AO2 SLP{int(r.integers(0, 999)):03d}")


# a pool of raw report strings (the "archive")
ARCHIVE = [make_metar(STATIONS[i % N_STATIONS], 1 + (i // 24) % 28, i % 24, rng)
           for i in range(6000)]

WIND_RE = re.compile(r"(\d{3}|VRB)(\d{2})(?:G(\d{2}))?KT")
VIS_RE = re.compile(r" (\d+)?(?:/(\d+))?SM ")
CLD_RE = re.compile(r"(FEW|SCT|BKN|OVC)(\d{3})")
TD_RE = re.compile(r" (M?\d{2})/(M?\d{2}) ")
ALT_RE = re.compile(r" A(\d{4})")
COVER = {"FEW": 0.25, "SCT": 0.5, "BKN": 0.75, "OVC": 1.0}


def tval(s):
    return -float(s[1:]) if s.startswith("M") else float(s)


def parse_metar(text):
    f = [0.0] * FEATS
    m = WIND_RE.search(text)
    if m:
        wd = 0.0 if m.group(1) == "VRB" else float(m.group(1))
        ws = float(m.group(2))
        f[0] = ws * np.cos(np.deg2rad(wd)) / 25.0
        f[1] = ws * np.sin(np.deg2rad(wd)) / 25.0
        f[2] = float(m.group(3) or 0) / 40.0
    m = VIS_RE.search(text)
    if m:
        num = float(m.group(1) or 1)
        den = float(m.group(2) or 1)
        f[3] = (num / den) / 10.0
    layers = CLD_RE.findall(text)
    if layers:
        f[4] = max(COVER[c] for c, _ in layers)
        f[5] = min(float(h) for _, h in layers) / 250.0
    m = TD_RE.search(text)
    if m:
        t, d = tval(m.group(1)), tval(m.group(2))
        f[6] = t / 35.0
        f[7] = (t - d) / 12.0
        # relative humidity (Magnus)
        f[8] = np.exp(17.625 * d / (243.04 + d)) / np.exp(17.625 * t / (243.04 + t))
    m = ALT_RE.search(text)
    if m:
        f[9] = (float(m.group(1)) - 2990.0) / 90.0
    f[10] = 1.0 if " FG " in text else 0.0
    f[11] = 1.0 if " BR " in text else 0.0
    return f


def metar_generator(seed):
    r = np.random.default_rng(seed)
    n = len(ARCHIVE)
    while True:
        start = int(r.integers(0, n - HOURS - 1))
        seq = [parse_metar(ARCHIVE[start + h]) for h in range(HOURS)]
        nxt = parse_metar(ARCHIVE[start + HOURS])
        x = np.asarray(seq, dtype=np.float32)
        y = np.float32(1.0 if (nxt[10] > 0 or nxt[3] < 0.1) else 0.0)
        yield x, y


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((HOURS, FEATS))
    h = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(inp)
    h = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(h)
    h = keras.layers.GRU(64)(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    out = keras.layers.Dense(1, activation="sigmoid")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


sig = (tf.TensorSpec((HOURS, FEATS), tf.float32), tf.TensorSpec((), tf.float32))


def make_ds():
    ds = tf.data.Dataset.from_generator(lambda: metar_generator(SEED), output_signature=sig)
    return ds.batch(BATCH).prefetch(2)


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


print(f"setup done at {time.perf_counter()-WALL0:.1f} s")
full = run(make_ds())
emit({"steps_per_second": 1.0 / full})
print(f"input_metarparse_fromgen_airportweather: {full*1000:.1f} ms/step, "
      f"{1.0/full:.2f} steps/s, wall {time.perf_counter()-WALL0:.1f} s")
if TRUTH:
    batch = next(iter(make_ds()))
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
    emit_truth(full, compute)
