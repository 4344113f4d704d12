"""Grazing-behaviour classification from livestock GPS collars.

Each example is a window of noisy collar fixes (lat/lon metres plus HDOP);
a serial tf.data map calls tf.py_function to run a constant-velocity Kalman
filter over the window in Python/numpy and derive smoothed speed, turning and
innovation features, and model.fit trains a Conv1D classifier
(grazing / resting / walking / drinking).
"""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

N_WIN = 1200
T = 64
BATCH = 32
STEPS = 60
EPOCHS = 3
DT = 10.0  # seconds between fixes


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def make_windows(rng):
    speeds = np.array([0.15, 0.01, 1.0, 0.05])
    y = rng.integers(0, 4, N_WIN).astype(np.int32)
    x = np.zeros((N_WIN, T, 3), np.float32)
    for i in range(N_WIN):
        heading = np.cumsum(rng.normal(0, 0.3 + 0.5 * (y[i] == 0), T))
        v = np.abs(rng.normal(speeds[y[i]], 0.05, T)) * DT
        pos = np.cumsum(np.stack([v * np.cos(heading), v * np.sin(heading)], 1), 0)
        hdop = rng.uniform(0.8, 3.0, T)
        x[i, :, :2] = pos + rng.normal(0, 1, (T, 2)) * hdop[:, None] * 2.5
        x[i, :, 2] = hdop
    return x, y


F = np.array([[1, 0, DT, 0], [0, 1, 0, DT], [0, 0, 1, 0], [0, 0, 0, 1]], np.float64)
H = np.array([[1, 0, 0, 0], [0, 1, 0, 0]], np.float64)
Q = np.diag([0.5, 0.5, 0.05, 0.05])


def kalman_features(win):
    win = win.numpy()
    s = np.array([win[0, 0], win[0, 1], 0.0, 0.0])
    P = np.eye(4) * 25.0
    out = np.zeros((T, 6), np.float32)
    for t in range(T):
        s = F @ s
        P = F @ P @ F.T + Q
        R = np.eye(2) * (2.5 * win[t, 2]) ** 2
        innov = win[t, :2] - H @ s
        S = H @ P @ H.T + R
        K = P @ H.T @ np.linalg.inv(S)
        s = s + K @ innov
        P = (np.eye(4) - K @ H) @ P
        nis = float(innov @ np.linalg.solve(S, innov))
        out[t] = (s[2], s[3], np.hypot(s[2], s[3]), np.arctan2(s[3], s[2]), nis, np.trace(P) / 100.0)
    out[:, 3] = np.concatenate([[0.0], np.diff(out[:, 3])])
    return out


def make_dataset(x, y):
    def prep(win, label):
        f = tf.py_function(kalman_features, [win], tf.float32)
        f.set_shape((T, 6))
        return f, label
    return tf.data.Dataset.from_tensor_slices((x, y)).repeat().map(prep).batch(BATCH)


def build_model():
    keras.utils.set_random_seed(5)
    inp = keras.Input((T, 6))
    x = layers.Conv1D(256, 5, padding="same", activation="relu")(inp)
    x = layers.Conv1D(256, 5, padding="same", activation="relu")(x)
    x = layers.MaxPooling1D(2)(x)
    x = layers.Conv1D(256, 5, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling1D()(x)
    m = keras.Model(inp, layers.Dense(4)(layers.Dense(64, activation="relu")(x)))
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history["loss"][-1]


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u43_input_kalman_pyfunc_livestockcollars_")
    try:
        rng = np.random.default_rng(4301)
        x, y = make_windows(rng)
        ds = make_dataset(x, y)
        full, loss = run(ds)
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")
        msg = f"collar GPS windows: {1.0 / full:.2f} steps/s, loss {loss:.3f}"
        if truth:
            batch = next(iter(ds))
            comp, _ = run(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
