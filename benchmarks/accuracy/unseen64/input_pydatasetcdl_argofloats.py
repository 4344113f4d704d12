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

# Argo float profiles stored as CDL text (ncdump-style): PRES/TEMP/PSAL variables with
# QC flag strings. A keras.utils.PyDataset parses each profile's text in Python, drops
# bad-QC levels, interpolates onto 64 standard pressure levels and derives density-like
# features; model.fit trains an MLP to predict mixed-layer depth.
BATCH = 32
STEPS = 35
EPOCHS = 2
NLEV = 1000
N_PROF = 400
STD_P = np.linspace(5.0, 1000.0, 64)
rng0 = np.random.default_rng(64002)


def make_profile(i, rng):
    pres = np.sort(rng.uniform(2.0, 1010.0, NLEV))
    mld = rng.uniform(20, 200)
    temp = 4.0 + 18.0 / (1.0 + np.exp((pres - mld) / 30.0)) + rng.normal(0, 0.05, NLEV)
    psal = 34.5 + 0.5 * np.tanh((pres - mld) / 100.0) + rng.normal(0, 0.01, NLEV)
    qc = "".join(rng.choice(list("1111111112344"), NLEV))
    txt = ["netcdf argo_%07d {" % i, "dimensions:", "\tN_LEVELS = %d ;" % NLEV, "variables:",
           "\tfloat PRES(N_LEVELS) ;", "\tfloat TEMP(N_LEVELS) ;", "\tfloat PSAL(N_LEVELS) ;",
           "// global attributes:", "\t\t:PLATFORM_NUMBER = \"%07d\" ;" % (5900000 + i),
           "\t\t:MLD = %.3f ;" % mld, "data:",
           " PRES = " + ", ".join("%.2f" % v for v in pres) + " ;",
           " TEMP = " + ", ".join("%.4f" % v for v in temp) + " ;",
           " PSAL = " + ", ".join("%.4f" % v for v in psal) + " ;",
           " PROFILE_QC = \"%s\" ;" % qc, "}"]
    return "\n".join(txt)


PROFILES = [make_profile(i, rng0) for i in range(N_PROF)]


def parse_cdl(text):
    vals, attrs = {}, {}
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith(":"):
            k, v = s[1:].split("=", 1)
            attrs[k.strip()] = v.strip().rstrip(";").strip().strip('"')
        elif " = " in s and not s.startswith("N_") and s.endswith(";") and not s.startswith("float"):
            k, v = s.split(" = ", 1)
            v = v.rstrip(";").strip()
            if v.startswith('"'):
                vals[k] = v.strip('"')
            else:
                vals[k] = [float(x) for x in v.split(",")]
    good = [j for j, c in enumerate(vals["PROFILE_QC"]) if c in "12"]
    pres = np.array([vals["PRES"][j] for j in good])
    temp = np.array([vals["TEMP"][j] for j in good])
    psal = np.array([vals["PSAL"][j] for j in good])
    t = np.interp(STD_P, pres, temp)
    s = np.interp(STD_P, pres, psal)
    rho = 1027.0 * (1 - 2e-4 * (t - 10.0) + 7.6e-4 * (s - 35.0))
    x = np.concatenate([t, s, rho - rho[0]]).astype(np.float32)
    return x, np.float32(float(attrs["MLD"]) / 100.0)


class ArgoProfiles(keras.utils.PyDataset):
    def __init__(self, seed):
        super().__init__(workers=1, use_multiprocessing=False)
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        ids = self.rng.integers(0, N_PROF, BATCH)
        xs, ys = zip(*[parse_cdl(PROFILES[i]) for i in ids])
        x = np.stack(xs)
        x = x + self.rng.normal(0, 0.01, x.shape).astype(np.float32)
        return x, np.array(ys, np.float32)


def build_model():
    keras.utils.set_random_seed(64)
    m = keras.Sequential([keras.Input((192,)), keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"), keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    return m


def run(data):
    model = build_model()
    timer = StepTimer()
    if isinstance(data, tf.data.Dataset):
        model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    else:
        model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


full = run(ArgoProfiles(11))
emit({"steps_per_second": 1.0 / full})
print("argofloats pydataset fit: %.4f s/step, %.2f steps/s, wall %.1f s" % (full, 1.0 / full, time.perf_counter() - WALL0))
if TRUTH:
    bx, by = ArgoProfiles(11)[0]
    comp = run(tf.data.Dataset.from_tensors((bx, by)).repeat())
    frac = min(max((full - comp) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print("truth: full %.4f compute %.4f fraction %.3f" % (full, comp, frac))
