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

# Beacon battery voltage telemetry: unmanned beacons report battery voltage, charge
# current, solar panel current and lantern load every 10 minutes.  Two-day windows
# are pre-built as tensors once; a custom @tf.function GradientTape loop trains a
# Conv1D + GRU model to predict time-to-low-voltage-cutoff.  Input is just indexing
# pre-built tensors; the model dominates.

BATCH = 64
STEPS = 220
WIN = 288
CH = 4
N_WIN = 1536


def make_telemetry():
    rng = np.random.default_rng(97)
    t = np.arange(WIN) / 144.0  # days
    xs = np.empty((N_WIN, WIN, CH), np.float32)
    ys = np.empty((N_WIN, 1), np.float32)
    for i in range(N_WIN):
        cap = rng.uniform(0.5, 1.0)
        sun = np.clip(np.sin(2 * np.pi * (t - 0.25)), 0, None) * rng.uniform(0.2, 1.0)
        load = 0.3 + 0.1 * (np.sin(2 * np.pi * t) < 0)
        soc = np.clip(0.8 + np.cumsum(sun * 0.004 - load * 0.003) / cap, 0, 1)
        volt = 11.6 + 1.4 * soc + rng.normal(0, 0.02, WIN)
        xs[i] = np.stack([volt - 12.5, sun, load, soc], axis=1)
        slope = (soc[-1] - soc[0]) / 2.0
        ys[i, 0] = np.clip((soc[-1] - 0.2) / max(1e-3, -slope), 0, 30) / 30.0
    return xs, ys


def build_model():
    keras.utils.set_random_seed(8)
    return keras.Sequential([
        keras.Input((WIN, CH)),
        keras.layers.Conv1D(64, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(96, 5, padding="same", activation="relu"),
        keras.layers.GRU(96, return_sequences=False),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])


def run_loop(batches):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.MeanSquaredError()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = batches(step)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(gaps.mean()), loss


xs_np, ys_np = make_telemetry()
XS = tf.constant(xs_np)
YS = tf.constant(ys_np)
NB = N_WIN // BATCH
pre = [(XS[b * BATCH:(b + 1) * BATCH], YS[b * BATCH:(b + 1) * BATCH]) for b in range(NB)]
full, last_loss = run_loop(lambda step: pre[step % NB])
emit({"steps_per_second": 1.0 / full})
print(f"[beaconvolts] normal run: {full*1000:.2f} ms/step, {1.0/full:.2f} steps/s, loss {last_loss:.4f}, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    xb, yb = pre[0]
    compute, _ = run_loop(lambda step: (xb, yb))
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[beaconvolts] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
