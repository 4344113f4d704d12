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

# ---- input_titrationcurve_trainonbatch_titrations: autotitrator log files
# (timestamped dosing lines) are parsed in Python, smoothed, differentiated to
# find equivalence points and resampled; each batch goes to model.train_on_batch.
BATCH = 32
STEPS = 220
LOG_LINES = 120
GRID = 96


def make_logs(n, seed=70):
    rng = np.random.default_rng(seed)
    logs, targets = [], []
    for i in range(n):
        conc = rng.uniform(0.01, 0.2)
        pka = rng.uniform(3.0, 9.5)
        vols = np.cumsum(rng.uniform(0.02, 0.12, LOG_LINES))
        veq = conc * 50 / 0.1
        frac = vols / veq
        ph = np.where(frac < 1, pka + np.log10(np.clip(frac, 1e-3, None) / np.clip(1 - frac, 1e-3, None)),
                      14 + np.log10(np.clip((vols - veq) * 0.1 / (50 + vols), 1e-7, None)))
        ph = np.clip(ph, 1, 13.5) + rng.normal(0, 0.02, LOG_LINES)
        lines = [f"# TITRANDO 905 sample=S{i:05d} titrant=NaOH 0.1000 mol/L"]
        for j in range(LOG_LINES):
            lines.append(f"2026-03-{1 + j // 100:02d}T10:{(j // 60) % 60:02d}:{j % 60:02d} DOS V={vols[j]:.4f}mL pH={ph[j]:.3f} T=25.{j % 10}C dE/dt=ok")
        logs.append("\n".join(lines))
        targets.append((conc * 10, pka / 10))
    return logs, np.array(targets, np.float32)


LINE_RE = re.compile(r"V=([0-9.]+)mL pH=([0-9.]+) T=([0-9.]+)C")


def featurise(log):
    vol, ph = [], []
    for ln in log.split("\n"):
        if ln.startswith("#"):
            continue
        m = LINE_RE.search(ln)
        vol.append(float(m.group(1))); ph.append(float(m.group(2)))
    # 5-point moving average in pure Python
    sm = []
    for k in range(len(ph)):
        lo, hi = max(0, k - 2), min(len(ph), k + 3)
        sm.append(sum(ph[lo:hi]) / (hi - lo))
    d1 = [0.0] + [(sm[k] - sm[k - 1]) / max(vol[k] - vol[k - 1], 1e-6) for k in range(1, len(sm))]
    d2 = [0.0] + [(d1[k] - d1[k - 1]) / max(vol[k] - vol[k - 1], 1e-6) for k in range(1, len(d1))]
    k_eq = max(range(len(d1)), key=lambda k: d1[k])
    v_eq = vol[k_eq]
    half = min(range(len(vol)), key=lambda k: abs(vol[k] - v_eq / 2))
    grid = np.linspace(0, vol[-1], GRID)
    curve = np.interp(grid, vol, sm) / 14.0
    dcurve = np.interp(grid, vol, d1) / 100.0
    d2curve = np.interp(grid, vol, d2) / 1000.0
    seq = np.stack([curve, dcurve, d2curve], -1).astype(np.float32)
    return seq, np.float32(v_eq / 100.0), np.float32(sm[half] / 14.0)


def make_model():
    s_in = keras.Input((GRID, 3)); f_in = keras.Input((2,))
    x = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(s_in)
    x = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    h = keras.layers.Dense(128, activation="relu")(keras.layers.Concatenate()([x, f_in]))
    m = keras.Model([s_in, f_in], keras.layers.Dense(2)(h))
    m.compile(optimizer="adam", loss="mse")
    return m


LOGS, TARGETS = make_logs(600)


def batch_from(idx):
    seqs, feats = [], []
    for i in idx:
        s, veq, phh = featurise(LOGS[int(i)])
        seqs.append(s); feats.append((veq, phh))
    return [np.stack(seqs), np.array(feats, np.float32)], TARGETS[idx]


def train(get_batch):
    keras.utils.set_random_seed(70)
    model = make_model()
    stamps = []
    for s in range(STEPS):
        x, y = get_batch(s)
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    return sec_per_step(list(np.diff(stamps))), loss


def main():
    rng = np.random.default_rng(3)
    full, loss = train(lambda s: batch_from(rng.integers(0, len(LOGS), BATCH)))
    sps = 1.0 / full
    emit({"steps_per_second": sps})
    print(f"[input_titrationcurve_trainonbatch_titrations] full {full*1000:.1f} ms/step, {sps:.2f} steps/s, loss {loss:.4f}, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        fixed = batch_from(np.random.default_rng(3).integers(0, len(LOGS), BATCH))
        comp, _ = train(lambda s: fixed)
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[input_titrationcurve_trainonbatch_titrations] truth: compute {comp*1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
