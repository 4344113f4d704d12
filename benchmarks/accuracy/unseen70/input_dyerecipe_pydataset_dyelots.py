import time
T0 = time.perf_counter()
import os, sys, json, re, math, tempfile, shutil, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import warnings
warnings.filterwarnings("ignore")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


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

# ---- input_dyerecipe_pydataset_dyelots: textile dye-lot recipes are parsed from text
# and turned into reflectance spectra (Kubelka-Munk mixing) and CIELAB in Python,
# inside a keras.utils.PyDataset that feeds model.fit.
BATCH = 128
STEPS = 60
EPOCHS = 2
BANDS = 31
WL = np.linspace(400, 700, BANDS)
DYES = {f"Reactive {c} {n}": (c, n) for c in ("Red", "Blue", "Yellow", "Black", "Orange")
        for n in (2, 120, 145, 195, 222, 250)}
DYE_NAMES = sorted(DYES)


def dye_ks(name):
    colour, num = DYES[name]
    centre = {"Red": 520, "Blue": 600, "Yellow": 450, "Black": 550, "Orange": 490}[colour] + (num % 17)
    width = 40 + num % 30 if colour != "Black" else 400
    return [math.exp(-((w - centre) / width) ** 2) * (1.5 + num / 250.0) for w in WL]


KS_TABLE = {n: dye_ks(n) for n in DYE_NAMES}


def make_recipes(n, seed=70):
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        k = int(rng.integers(1, 4))
        dyes = [DYE_NAMES[int(j)] for j in rng.choice(len(DYE_NAMES), size=k, replace=False)]
        parts = [f"dye={d}:{rng.uniform(0.05, 3.0):.3f}%" for d in dyes]
        parts += [f"salt={rng.uniform(20, 90):.1f}g/L", f"soda={rng.uniform(5, 25):.1f}g/L",
                  f"temp={rng.uniform(40, 80):.1f}C", f"time={rng.uniform(20, 90):.0f}min",
                  f"lr=1:{int(rng.integers(5, 20))}", f"lot=L{i:06d}"]
        lines.append("; ".join(parts))
    return lines


def lab_from_refl(r):
    # crude CIE-like tristimulus integration done per band in Python
    X = Y = Z = 0.0
    for w, v in zip(WL, r):
        xb = math.exp(-((w - 600) / 40) ** 2) + 0.35 * math.exp(-((w - 445) / 20) ** 2)
        yb = math.exp(-((w - 555) / 45) ** 2)
        zb = 1.7 * math.exp(-((w - 450) / 25) ** 2)
        X += v * xb; Y += v * yb; Z += v * zb
    f = lambda t: t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
    X, Y, Z = X / 9.5, Y / 10.0, Z / 10.9
    return 116 * f(Y) - 16, 500 * (f(X) - f(Y)), 200 * (f(Y) - f(Z))


def parse_recipe(line):
    fields = {}
    dyes = []
    for part in line.split(";"):
        key, _, val = part.strip().partition("=")
        if key == "dye":
            name, _, pct = val.rpartition(":")
            dyes.append((name, float(pct.rstrip("%"))))
        else:
            fields[key] = float(re.sub(r"[^0-9.]", "", val.split(":")[-1]))
    exhaustion = min(0.95, 0.4 + fields["salt"] / 200 + fields["temp"] / 400 + fields["time"] / 600)
    ks = [0.01] * BANDS
    for name, pct in dyes:
        table = KS_TABLE[name]
        for b in range(BANDS):
            ks[b] += table[b] * pct * exhaustion
    refl = [1 + k - math.sqrt(k * k + 2 * k) for k in ks]
    L, a, bb = lab_from_refl(refl)
    feats = [fields["salt"] / 90, fields["soda"] / 25, fields["temp"] / 80, fields["time"] / 90,
             fields["lr"] / 20, exhaustion, L / 100, a / 100, bb / 100]
    return refl + feats, (L / 100.0, a / 100.0, bb / 100.0)


class DyeLots(keras.utils.PyDataset):
    def __init__(self, lines, **kw):
        super().__init__(**kw)
        self.lines = lines

    def __len__(self):
        return len(self.lines) // BATCH

    def __getitem__(self, idx):
        xs, ys = [], []
        for line in self.lines[idx * BATCH:(idx + 1) * BATCH]:
            for _ in range(2):  # two parses per recipe: nominal + one shade check
                x, y = parse_recipe(line)
            xs.append(x); ys.append(y)
        return np.asarray(xs, np.float32), np.asarray(ys, np.float32)


def make_model():
    inp = keras.Input((BANDS + 9,))
    h = inp
    for _ in range(3):
        h = keras.layers.Dense(384, activation="relu")(h)
    out = keras.layers.Dense(3)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse")
    return m


LINES = make_recipes(BATCH * STEPS)


def run(data):
    keras.utils.set_random_seed(70)
    model = make_model()
    timer = StepTimer()
    model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    full = run(DyeLots(LINES))
    sps = 1.0 / full
    emit({"steps_per_second": sps})
    print(f"[input_dyerecipe_pydataset_dyelots] full {full*1000:.1f} ms/step, {sps:.2f} steps/s, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        batch = DyeLots(LINES)[0]
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[input_dyerecipe_pydataset_dyelots] truth: compute {comp*1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
