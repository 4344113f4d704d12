import time; T0 = time.perf_counter()
import json
import os
import sys
import shutil
import tempfile
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


# Cat activity collars: 3-axis accelerometer windows (25 Hz, 10 s) are built in a
# Python loop, band-power FFT features and pounce/jump bout counts are computed per
# window in NumPy/Python, then a custom @tf.function GradientTape step trains an
# activity classifier (sleep, groom, walk, play, eat).
WINDOW = 250
NUM_FEATS = 3 * 24 + 6
NUM_CLASSES = 5
BATCH = 64
STEPS = 560


def collar_window(rng):
    t = np.arange(WINDOW) / 25.0
    kind = int(rng.integers(NUM_CLASSES))
    freq = [0.05, 1.2, 2.0, 3.5, 0.8][kind]
    amp = [0.02, 0.3, 0.6, 1.2, 0.25][kind]
    sig = np.stack([amp * np.sin(2 * np.pi * freq * t + rng.uniform(0, 6)) for _ in range(3)])
    sig += rng.normal(0, 0.08, size=sig.shape)
    sig[2] += 1.0
    return sig, kind


def window_features(sig):
    feats = []
    for axis in sig:
        spec = np.abs(np.fft.rfft(axis - axis.mean()))
        edges = np.linspace(0, len(spec), 25).astype(int)
        feats.extend(float(spec[a:b].sum()) / 50.0 for a, b in zip(edges, edges[1:]))
    mag = np.sqrt((sig ** 2).sum(axis=0))
    bouts, in_bout, longest, cur = 0, False, 0, 0
    for m in mag:
        if m > 1.6:
            cur += 1
            if not in_bout:
                bouts += 1
                in_bout = True
        else:
            longest = max(longest, cur)
            cur, in_bout = 0, False
    jerk = np.abs(np.diff(mag))
    feats += [bouts / 10.0, longest / 25.0, float(mag.mean()), float(mag.std()),
              float(jerk.max()), float(np.percentile(jerk, 95))]
    return feats


def make_batch(rng):
    xs = np.zeros((BATCH, NUM_FEATS), dtype=np.float32)
    ys = np.zeros((BATCH,), dtype=np.int32)
    for i in range(BATCH):
        sig, ys[i] = collar_window(rng)
        xs[i] = window_features(sig)
    return xs, ys


def build_model():
    keras.utils.set_random_seed(83)
    inp = keras.Input((NUM_FEATS,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(NUM_CLASSES)(x)
    return keras.Model(inp, out)


def train(batch_source):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last = [], None
    for step in range(STEPS):
        x, y = batch_source(step)
        loss = float(train_step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    gaps = gaps[5:]
    return sum(gaps) / len(gaps), loss


stream_rng = np.random.default_rng(2026)
full, last_loss = train(lambda step: make_batch(stream_rng))
emit({"steps_per_second": 1.0 / full})
summary = "catcollars GradientTape loop: %.2f ms/step (loss %.3f)" % (full * 1000, last_loss)
if TRUTH:
    fx, fy = make_batch(np.random.default_rng(7))
    compute, _ = train(lambda step: (fx, fy))
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    summary += ", fixed-batch %.2f ms/step, truth_input_fraction=%.3f" % (compute * 1000, frac)
print(summary + ", wall %.1f s" % (time.perf_counter() - T0))
