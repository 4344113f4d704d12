"""Sewing-machine stitch-sensor fault classifier.

Each training window is cut from raw lockstitch sensor traces (needle
force, thread tension, bed vibration) and turned into per-frame features in
Python (detrend, RMS, peak, zero crossings, stitch-event counting) right
before every step of a hand-written tf.GradientTape loop.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
import math

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


SEED = 8501
BATCH = 64
STEPS = 800
N_TRACES = 1536
TRACE_LEN = 1024
N_FRAMES = 32
FRAME = TRACE_LEN // N_FRAMES
CLASSES = ["clean", "skipped_stitch", "thread_break", "needle_deflection"]

rng = np.random.default_rng(SEED)
tf.random.set_seed(SEED)
keras.utils.set_random_seed(SEED)


def make_traces():
    t = np.arange(TRACE_LEN, dtype=np.float32)
    spm = rng.uniform(800, 2200, size=(N_TRACES, 1)).astype(np.float32)  # stitches per minute
    phase = rng.uniform(0, 2 * np.pi, size=(N_TRACES, 1)).astype(np.float32)
    cyc = 2 * np.pi * t[None, :] * spm / 60.0 / 1000.0 + phase
    labels = rng.integers(0, len(CLASSES), size=N_TRACES)
    force = np.maximum(np.sin(cyc), 0) ** 3
    tension = 0.6 + 0.3 * np.sin(cyc + 1.1)
    vib = 0.2 * np.sin(7 * cyc)
    for i in range(N_TRACES):
        lab = labels[i]
        if lab == 1:  # skipped stitches: force pulses vanish in patches
            s = rng.integers(0, TRACE_LEN - 200)
            force[i, s:s + 150] *= 0.1
        elif lab == 2:  # thread break: tension collapses
            s = rng.integers(200, TRACE_LEN - 100)
            tension[i, s:] *= 0.15
        elif lab == 3:  # needle deflection: extra vibration harmonics
            vib[i] += 0.35 * np.sin(13 * cyc[i] + 0.4)
    raw = np.stack([force, tension, vib], axis=-1)
    raw += rng.normal(0, 0.05, size=raw.shape)
    return raw.astype(np.float32), labels.astype(np.int32)


TRACES, LABELS = make_traces()


def window_features(trace, jitter_rng):
    """Per-window feature extraction done in Python/NumPy, one trace at a time."""
    x = trace + jitter_rng.normal(0, 0.02, size=trace.shape).astype(np.float32)
    seg = x.reshape(N_FRAMES, FRAME, 3)
    seg = seg - seg.mean(axis=1, keepdims=True)
    rms = np.sqrt((seg ** 2).mean(axis=1))
    peak = np.abs(seg).max(axis=1)
    zc = (np.diff(np.sign(seg), axis=1) != 0).sum(axis=1)
    # count needle-down events on the force channel with a small state machine
    events = [0] * N_FRAMES
    above = False
    thr = 0.5 * float(peak[:, 0].mean())
    for k, v in enumerate(seg[:, :, 0].ravel().tolist()):
        if not above and v > thr:
            events[k // FRAME] += 1
            above = True
        elif above and v < 0.0:
            above = False
    feats = np.zeros((N_FRAMES, 12), dtype=np.float32)
    feats[:, 0:3] = rms
    feats[:, 3:6] = peak
    feats[:, 6:9] = zc / FRAME
    feats[:, 9] = np.asarray(events, dtype=np.float32) / 4.0
    feats[:, 10] = np.log1p(rms[:, 1])
    feats[:, 11] = seg[:, :, 2].std(axis=1)
    return feats


def build_batch(step, jitter_rng):
    idx = jitter_rng.integers(0, N_TRACES, size=BATCH)
    xb = np.stack([window_features(TRACES[i], jitter_rng) for i in idx])
    yb = LABELS[idx]
    return xb, yb


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((N_FRAMES, 12))
    h = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(inp)
    h = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(h)
    h = keras.layers.Conv1D(96, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    out = keras.layers.Dense(len(CLASSES))(h)
    return keras.Model(inp, out)


def train(feed):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss = float("nan")
    for step in range(STEPS):
        xb, yb = feed(step)
        loss = float(train_step(tf.convert_to_tensor(xb), tf.convert_to_tensor(yb)))
        stamps.append(time.perf_counter())
    gaps = [b - a for a, b in zip(stamps[:-1], stamps[1:])][5:]
    return sum(gaps) / len(gaps), loss


def main():
    jitter = np.random.default_rng(SEED + 1)
    spf, loss = train(lambda step: build_batch(step, jitter))
    emit({"steps_per_second": 1.0 / spf})
    line = f"stitchsensor: {STEPS} steps, {spf*1000:.1f} ms/step, loss {loss:.3f}"
    if TRUTH:
        fixed = build_batch(0, np.random.default_rng(SEED + 2))
        spc, _ = train(lambda step: fixed)
        frac = min(max((spf - spc) / spf, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        line += f", compute-only {spc*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", total {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
