"""Human activity recognition from wrist IMU windows held in NumPy arrays.

Windows are jittered / time-warped / rotated with NumPy before they reach the model.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_WINDOWS = 12_000
WINDOW = 256
CHANNELS = 6
N_CLASSES = 8
BATCH_SIZE = 64
STEPS = 400
SEED = 11


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    p.add_argument("--steps", type=int, default=STEPS)
    return p.parse_args()


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_train_begin(self, logs=None):
        self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        d = self.durations[5:]
        return float(np.mean(d)) if d else float("nan")


# ---------------------------------------------------------------- data
def synth_windows(rng):
    t = np.linspace(0, 1, WINDOW, dtype=np.float64)
    labels = rng.integers(0, N_CLASSES, N_WINDOWS)
    freq = 1.0 + labels[:, None] * 0.7
    base = np.sin(2 * np.pi * freq * t[None, :] * 4)
    X = np.repeat(base[:, :, None], CHANNELS, axis=2)
    X += 0.3 * rng.normal(size=X.shape)
    return X.astype(np.float64), labels.astype(np.int64)


_aug_rng = np.random.default_rng(123)


def augment(window, label):
    w = window.copy()
    # magnitude scaling and jitter
    w *= _aug_rng.normal(1.0, 0.1, size=(1, CHANNELS))
    w += _aug_rng.normal(0, 0.05, size=w.shape)
    # time warp: smooth random speed curve, resample each channel
    knots = _aug_rng.normal(1.0, 0.2, size=6)
    speed = np.interp(np.linspace(0, 5, WINDOW), np.arange(6), knots)
    warped_t = np.cumsum(speed)
    warped_t = (warped_t - warped_t[0]) / (warped_t[-1] - warped_t[0]) * (WINDOW - 1)
    grid = np.arange(WINDOW)
    w = np.stack([np.interp(grid, warped_t, w[:, c]) for c in range(CHANNELS)], axis=1)
    # random 3D rotation of accelerometer and gyro triads
    angles = _aug_rng.uniform(-0.3, 0.3, size=3)
    cx, cy, cz = np.cos(angles)
    sx, sy, sz = np.sin(angles)
    rot = (
        np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
        @ np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
        @ np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    )
    w[:, :3] = w[:, :3] @ rot.T
    w[:, 3:] = w[:, 3:] @ rot.T
    # per-window standardisation
    w = (w - w.mean(axis=0)) / (w.std(axis=0) + 1e-6)
    return w.astype(np.float32), np.int32(label)


def tf_augment(x, y):
    x, y = tf.numpy_function(augment, [x, y], [tf.float32, tf.int32])
    x.set_shape((WINDOW, CHANNELS))
    y.set_shape(())
    return x, y


def make_dataset(X, y):
    ds = tf.data.Dataset.from_tensor_slices((X, y))
    ds = ds.shuffle(4096, seed=SEED).repeat()
    ds = ds.map(tf_augment)
    ds = ds.batch(BATCH_SIZE)
    return ds


# ---------------------------------------------------------------- model
def build_model():
    inp = keras.Input(shape=(WINDOW, CHANNELS))
    x = inp
    for filters in (16, 32, 48):
        x = keras.layers.Conv1D(filters, 5, padding="same", activation="relu")(x)
        x = keras.layers.Conv1D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    tf.random.set_seed(SEED)
    X, y = synth_windows(rng)
    print(f"windows: {X.shape} {X.dtype}, labels: {np.bincount(y)}")

    model = build_model()
    clock = StepClock()
    t0 = time.perf_counter()
    hist = model.fit(
        make_dataset(X, y), epochs=1, steps_per_epoch=args.steps, callbacks=[clock], verbose=0
    )
    full = clock.seconds_per_step()
    print(
        f"trained {args.steps} steps in {time.perf_counter() - t0:.1f}s, "
        f"acc={hist.history['accuracy'][-1]:.3f}"
    )

    out_path = os.environ.get("ACCURACY_OUT")
    if out_path:
        with open(out_path, "a") as f:
            f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")

    if args.truth:
        batch = next(iter(make_dataset(X, y)))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        clock2 = StepClock()
        model2.fit(cached, epochs=1, steps_per_epoch=args.steps, callbacks=[clock2], verbose=0)
        compute = clock2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        if out_path:
            with open(out_path, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        print(f"truth: full={full * 1000:.1f}ms compute={compute * 1000:.1f}ms fraction={frac:.2f}")

    print(f"HAR conv1d: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)")


if __name__ == "__main__":
    main()
