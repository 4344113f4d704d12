"""Rolling-machine vibration traces -> bearing wear index.

Orthodox rollers and CTC rollers are sampled with an accelerometer.  Every
step a Python loop synthesises the batch of raw traces, takes the spectrum,
sums band energies in a Python loop and adds crest factor / kurtosis, then
hands the arrays to a custom @tf.function GradientTape step.
"""
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

BATCH = 64
STEPS = 95
EPOCHS = 3
TRACE = 2048
BANDS = 48
SPEC_BINS = 1024


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def roller_trace(rng):
    rpm = rng.uniform(40, 90)
    wear = rng.uniform(0.0, 1.0)
    t = np.arange(TRACE) / 2000.0
    f0 = rpm / 60.0
    sig = np.sin(2 * np.pi * f0 * 12 * t) + 0.4 * np.sin(2 * np.pi * f0 * 37 * t + rng.uniform(0, 6))
    impacts = rng.random(TRACE) < 0.002 + 0.01 * wear
    sig = sig + impacts * rng.normal(0, 3.0 + 4.0 * wear, TRACE) + rng.normal(0, 0.3, TRACE)
    return sig, wear


def trace_features(sig):
    spec = np.abs(np.fft.rfft(sig * np.hanning(TRACE)))[:SPEC_BINS]
    edges = np.linspace(0, SPEC_BINS, BANDS + 1).astype(int)
    bands = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        seg = spec[lo:hi]
        bands.append(float(np.sqrt(np.mean(seg * seg))))
    rms = float(np.sqrt(np.mean(sig * sig)))
    crest = float(np.max(np.abs(sig)) / rms)
    centred = sig - sig.mean()
    kurt = float(np.mean(centred ** 4) / (np.mean(centred ** 2) ** 2))
    env = np.convolve(np.abs(sig), np.ones(32) / 32, mode="same")[::32]
    return np.concatenate([np.log1p(spec), np.log1p(bands), [rms, crest / 5, kurt / 10], env]).astype(np.float32)


def make_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        sig, wear = roller_trace(rng)
        xs.append(trace_features(sig))
        ys.append(wear)
    return np.stack(xs), np.array(ys, np.float32)[:, None]


FEATS = SPEC_BINS + BANDS + 3 + TRACE // 32


def build_model():
    keras.utils.set_random_seed(95)
    return keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(1),
    ])


def train(next_batch):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for _ in range(STEPS):
            x, y = next_batch()
            loss = float(step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    g = gaps[5:]
    return sum(g) / len(g), loss


rng = np.random.default_rng(41)
full, loss = train(lambda: make_batch(rng))
emit({"steps_per_second": 1.0 / full})
print("[rollervibes] normal run: %.4f s/step, %.2f steps/s, loss %.4f, wall %.1f s"
      % (full, 1.0 / full, loss, time.perf_counter() - T0))

if TRUTH:
    fixed = make_batch(np.random.default_rng(41))
    compute, _ = train(lambda: fixed)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("[rollervibes] truth: full %.4f s/step, compute-only %.4f s/step, input fraction %.3f"
          % (full, compute, frac))
