import time; T0 = time.perf_counter()
import os
import sys
import json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at the end of every training batch; gaps only within an epoch."""

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

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)

# Tide gauge readings: a float-well gauge at the lighthouse jetty logs sea level every
# 6 minutes.  Each training step a Python loop cuts random 3-day windows from a long
# synthetic record (M2, S2, N2, K1, O1 constituents + storm surge), fits the harmonic
# constituents per window with least squares, and builds residual/surge features.
# A custom @tf.function GradientTape step learns the next-12-hour surge.

BATCH = 64
STEPS = 900
WIN = 720          # 3 days of 6-minute readings
HORIZON = 120      # next 12 h
N_FEAT = 2 * 5 + 1 + 96 + 64 + 4
CONSTITUENTS_H = np.array([12.4206, 12.0, 12.6583, 23.9345, 25.8193])


def synth_record(n, rng):
    t = np.arange(n) * 0.1  # hours
    level = np.zeros(n)
    for per, amp in zip(CONSTITUENTS_H, [1.8, 0.6, 0.35, 0.3, 0.25]):
        level += amp * np.cos(2 * np.pi * t / per + rng.uniform(0, 6.28))
    surge = np.convolve(rng.normal(0, 0.05, n), np.ones(300) / 30.0, mode="same")
    return (level + surge + rng.normal(0, 0.02, n)).astype(np.float64), surge


RNG = np.random.default_rng(97)
LEVEL, SURGE = synth_record(400_000, RNG)
T_H = np.arange(WIN) * 0.1
DESIGN = np.concatenate([np.cos(2 * np.pi * T_H[:, None] / CONSTITUENTS_H),
                         np.sin(2 * np.pi * T_H[:, None] / CONSTITUENTS_H),
                         np.ones((WIN, 1))], axis=1)


def window_features(start):
    seg = LEVEL[start:start + WIN]
    coef, *_ = np.linalg.lstsq(DESIGN, seg, rcond=None)
    resid = seg - DESIGN @ coef
    resid_s = np.convolve(resid, np.hanning(31) / 15.5, mode="same")
    tail = resid_s[-96:]
    spec = np.log1p(np.abs(np.fft.rfft(resid))[:64])
    # tide-table style high/low water extraction, scanned reading by reading
    vals = seg.tolist()
    highs, lows = [], []
    for k in range(2, len(vals) - 2):
        v = vals[k]
        if v > vals[k - 1] and v >= vals[k + 1] and v > vals[k - 2] and v >= vals[k + 2]:
            highs.append(v)
        elif v < vals[k - 1] and v <= vals[k + 1] and v < vals[k - 2] and v <= vals[k + 2]:
            lows.append(v)
    hw = sum(highs) / len(highs) if highs else 0.0
    lw = sum(lows) / len(lows) if lows else 0.0
    extrema = np.array([hw, lw, len(highs) / 60.0, len(lows) / 60.0])
    feats = np.concatenate([coef, tail, spec, extrema]).astype(np.float32)
    target = SURGE[start + WIN:start + WIN + HORIZON:10].astype(np.float32)
    return feats, target


def next_batch(rng):
    xs = np.empty((BATCH, N_FEAT), np.float32)
    ys = np.empty((BATCH, HORIZON // 10), np.float32)
    for i in range(BATCH):
        s = int(rng.integers(0, len(LEVEL) - WIN - HORIZON))
        xs[i], ys[i] = window_features(s)
    return xs, ys


def build_model():
    keras.utils.set_random_seed(5)
    return keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(768, activation="gelu"),
        keras.layers.Dense(768, activation="gelu"),
        keras.layers.Dense(512, activation="gelu"),
        keras.layers.Dense(HORIZON // 10),
    ])


def run_loop(batch_source):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.Huber()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = batch_source(step)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(gaps.mean()), loss


rng = np.random.default_rng(11)
full, last_loss = run_loop(lambda step: next_batch(rng))
emit({"steps_per_second": 1.0 / full})
print(f"[tidereadings] normal run: {full*1000:.2f} ms/step, {1.0/full:.2f} steps/s, loss {last_loss:.4f}, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    xb, yb = next_batch(np.random.default_rng(11))
    compute, _ = run_loop(lambda step: (xb, yb))
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[tidereadings] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
