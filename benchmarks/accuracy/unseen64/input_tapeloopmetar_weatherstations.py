import os, sys, time, json, tempfile, shutil
WALL0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter gaps between consecutive train batches within an epoch."""

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

# Surface weather stations: hourly METAR reports as raw strings. A custom GradientTape
# loop (tf.function train step) is fed batches assembled in Python: every report in a
# 24-hour window is regex-parsed (wind, gusts, visibility, cloud layers, temperature,
# dew point, altimeter), unit-converted and standardised. Target: next-hour temperature.
import re
BATCH = 32
STEPS = 60
WIN = 24
N_STATIONS = 40
HOURS = 400
rng0 = np.random.default_rng(64004)
CLOUD = {"FEW": 0.2, "SCT": 0.4, "BKN": 0.7, "OVC": 1.0}
METAR_RE = re.compile(r"^(?P<stn>[A-Z]{4}) (?P<day>\d\d)(?P<hh>\d\d)(?P<mm>\d\d)Z (?P<wd>\d{3}|VRB)(?P<ws>\d{2,3})(G(?P<wg>\d{2,3}))?KT "
                      r"(?P<vis>[\d/]+)SM (?P<clouds>((FEW|SCT|BKN|OVC)\d{3} ?)*)(?P<t>M?\d\d)/(?P<d>M?\d\d) A(?P<alt>\d{4})")


def fmt_t(v):
    return ("M%02d" % -v) if v < 0 else "%02d" % v


def make_reports(rng):
    reps = []
    for s in range(N_STATIONS):
        stn = "K" + "".join(chr(65 + int(c)) for c in rng.integers(0, 26, 3))
        base = rng.uniform(-5, 25)
        row = []
        for h in range(HOURS):
            t = int(round(base + 8 * np.sin(2 * np.pi * h / 24) + rng.normal(0, 1)))
            d = t - int(rng.integers(0, 8))
            wd = int(rng.integers(0, 36)) * 10
            ws = int(rng.integers(0, 30))
            g = (" G%02d" % (ws + 10)).strip() if ws > 18 else ""
            clouds = " ".join("%s%03d" % (k, int(rng.integers(5, 250))) for k in rng.choice(list(CLOUD), int(rng.integers(0, 4))))
            row.append("%s %02d%02d56Z %03d%02d%sKT %dSM %s%s/%s A%04d RMK AO2 SLP%03d T%08d" % (
                stn, 1 + h // 24 % 28, h % 24, wd, ws, g, int(rng.integers(1, 11)), clouds + (" " if clouds else ""),
                fmt_t(t), fmt_t(d), int(rng.integers(2950, 3050)), int(rng.integers(0, 999)), int(rng.integers(0, 1e7))))
        reps.append(row)
    return reps


REPORTS = make_reports(rng0)


def parse(rep):
    m = METAR_RE.match(rep)
    g = m.groupdict()
    temp = -int(g["t"][1:]) if g["t"].startswith("M") else int(g["t"])
    dew = -int(g["d"][1:]) if g["d"].startswith("M") else int(g["d"])
    wd = 0.0 if g["wd"] == "VRB" else float(g["wd"])
    ws = float(g["ws"])
    gust = float(g["wg"]) if g["wg"] else ws
    cover = max([CLOUD[c[:3]] for c in g["clouds"].split()] or [0.0])
    ceil = min([int(c[3:]) for c in g["clouds"].split() if c[:3] in ("BKN", "OVC")] or [999])
    hour = int(g["hh"])
    return [temp / 20.0, dew / 20.0, np.sin(np.deg2rad(wd)) * ws / 20, np.cos(np.deg2rad(wd)) * ws / 20,
            gust / 30.0, float(g["vis"]) / 10.0, cover, ceil / 250.0, (int(g["alt"]) - 2992) / 30.0,
            np.sin(2 * np.pi * hour / 24), np.cos(2 * np.pi * hour / 24)]


def make_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        s = int(rng.integers(0, N_STATIONS))
        h = int(rng.integers(0, HOURS - WIN - 1))
        xs.append([parse(r) for r in REPORTS[s][h:h + WIN]])
        ys.append(parse(REPORTS[s][h + WIN])[0])
    return np.asarray(xs, np.float32), np.asarray(ys, np.float32)[:, None]


def build_model():
    keras.utils.set_random_seed(64)
    return keras.Sequential([keras.Input((WIN, 11)), keras.layers.Conv1D(64, 3, padding="same", activation="relu"),
                             keras.layers.Conv1D(64, 3, padding="same", activation="relu"),
                             keras.layers.Flatten(), keras.layers.Dense(128, activation="relu"), keras.layers.Dense(1)])


def run(fixed=None):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    rng = np.random.default_rng(9)
    gaps, last = [], None
    for i in range(STEPS):
        x, y = fixed if fixed is not None else make_batch(rng)
        loss = float(step(tf.constant(x), tf.constant(y)))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return sec_per_step(gaps), loss


full, loss = run()
emit({"steps_per_second": 1.0 / full})
print("weatherstations metar tape loop: %.4f s/step, %.2f steps/s, loss %.4f, wall %.1f s" % (full, 1.0 / full, loss, time.perf_counter() - WALL0))
if TRUTH:
    fixed = make_batch(np.random.default_rng(9))
    comp, _ = run(fixed)
    frac = min(max((full - comp) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print("truth: full %.4f compute %.4f fraction %.3f" % (full, comp, frac))
