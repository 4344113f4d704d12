"""Wearable gesture recognition with dynamic-time-warping template features.

Wrist accelerometer clips (3 axes x 256 samples) are generated in memory; for
each batch the Python loop downsamples every clip, computes a banded DTW
distance to each class template with a pure-Python dynamic program, and trains
a 1-D CNN on the raw clip plus the DTW distances with model.train_on_batch.
"""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS = 32, 280
N_CLIPS, LEN, NCLS = 2000, 256, 6
DS, BAND = 4, 8          # DTW on 64-point magnitude envelopes, Sakoe-Chiba band 8


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_clips(rng):
    t = np.linspace(0, 1, LEN)
    y = rng.integers(0, NCLS, N_CLIPS)
    x = np.empty((N_CLIPS, LEN, 3), np.float32)
    for i, c in enumerate(y):
        warp = t ** rng.uniform(0.8, 1.25)
        for a in range(3):
            x[i, :, a] = np.sin(2 * np.pi * (c + 1) * warp + a) * np.exp(-((warp - 0.5) ** 2) * (c + 2))
        x[i] += rng.normal(0, 0.25, (LEN, 3))
    return x, y.astype(np.int32)


def envelope(clip):
    mag = np.sqrt((clip ** 2).sum(-1))
    return mag.reshape(-1, DS).mean(-1).tolist()


def dtw(a, b):
    n, m = len(a), len(b)
    inf = float("inf")
    prev = [inf] * (m + 1)
    prev[0] = 0.0
    for i in range(1, n + 1):
        cur = [inf] * (m + 1)
        ai = a[i - 1]
        for j in range(max(1, i - BAND), min(m, i + BAND) + 1):
            cost = abs(ai - b[j - 1])
            best = prev[j - 1]
            if prev[j] < best:
                best = prev[j]
            if cur[j - 1] < best:
                best = cur[j - 1]
            cur[j] = cost + best
        prev = cur
    return prev[m] / (n + m)


def make_batch(x, y, templates, rng):
    idx = rng.integers(0, N_CLIPS, BATCH)
    clips = x[idx]
    feats = np.empty((BATCH, NCLS), np.float32)
    for r in range(BATCH):
        env = envelope(clips[r])
        feats[r] = [dtw(env, tmpl) for tmpl in templates]
    return (clips, feats), y[idx]


def build_model():
    raw = keras.Input((LEN, 3))
    dist = keras.Input((NCLS,))
    h = keras.layers.Conv1D(64, 7, activation="relu", padding="same")(raw)
    h = keras.layers.MaxPooling1D(2)(h)
    h = keras.layers.Conv1D(128, 5, activation="relu", padding="same")(h)
    h = keras.layers.MaxPooling1D(2)(h)
    h = keras.layers.Conv1D(128, 5, activation="relu", padding="same")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    h = keras.layers.Concatenate()([h, keras.layers.Dense(32, activation="relu")(dist)])
    h = keras.layers.Dense(128, activation="relu")(h)
    out = keras.layers.Dense(NCLS, activation="softmax")(h)
    m = keras.Model([raw, dist], out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def train(batches_fn):
    model = build_model()
    times = []
    for s in range(STEPS):
        xb, yb = batches_fn()
        loss = float(model.train_on_batch(xb, yb))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:])), loss


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(39)
    tf.random.set_seed(39)
    tmp = tempfile.mkdtemp(prefix="u39_input_dtw_trainonbatch_gestures_")
    try:
        x, y = make_clips(rng)
        templates = [np.mean([envelope(x[i]) for i in np.flatnonzero(y == c)[:50]], axis=0).tolist()
                     for c in range(NCLS)]
        full, loss = train(lambda: make_batch(x, y, templates, rng))
        emit({"steps_per_second": 1.0 / full})
        msg = f"input_dtw_trainonbatch_gestures: {1.0/full:.1f} steps/s, loss={loss:.3f}"
        if truth:
            fixed = make_batch(x, y, templates, rng)
            comp, _ = train(lambda: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction={frac:.3f} ({full*1e3:.1f} vs {comp*1e3:.1f} ms)"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
