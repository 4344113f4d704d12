"""Wind-turbine gearbox vibration anomaly detection: short fit, long scoring pass.

A 1D convolutional autoencoder is fitted briefly on healthy accelerometer windows, then
a week-long multi-channel recording is scored with a sliding window (stride 16) using
model.predict; windows with high reconstruction error are flagged.

    python eval_turbine_vibration_scoring.py [--truth]
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras
from numpy.lib.stride_tricks import sliding_window_view

WIN = 256
CHANNELS = 3
BATCH_SIZE = 64
TRAIN_STEPS = 45
STRIDE = 16
RECORDING_LEN = 2_000_000  # samples of the long recording to score


def vibration(n, rng, fault_at=None):
    t = np.arange(n, dtype=np.float32)
    sig = np.stack(
        [
            np.sin(2 * np.pi * t / 37.0) + 0.5 * np.sin(2 * np.pi * t / 11.3),
            0.8 * np.sin(2 * np.pi * t / 37.0 + 1.0) + 0.3 * np.sin(2 * np.pi * t / 5.1),
            0.6 * np.sin(2 * np.pi * t / 23.0),
        ],
        axis=-1,
    )
    sig += rng.normal(0, 0.2, size=sig.shape).astype(np.float32)
    if fault_at is not None:  # bearing defect: periodic impulses after fault_at
        impulses = np.zeros(n, dtype=np.float32)
        impulses[fault_at::97] = 3.0
        sig[:, 0] += np.convolve(impulses, np.exp(-np.arange(20) / 3.0), mode="same")
    return sig.astype(np.float32)


def build_model():
    inp = keras.Input((WIN, CHANNELS))
    x = keras.layers.Conv1D(32, 7, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(64, 5, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(64, 5, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv1DTranspose(64, 5, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv1DTranspose(32, 5, strides=2, padding="same", activation="relu")(x)
    out = keras.layers.Conv1DTranspose(CHANNELS, 7, strides=2, padding="same")(x)
    model = keras.Model(inp, out, name="vib_autoencoder")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return model


class StepClock(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.ends = []

    def on_train_batch_end(self, batch, logs=None):
        self.ends.append(time.perf_counter())


def fit(data):
    keras.utils.set_random_seed(8)
    model = build_model()
    clock = StepClock()
    if isinstance(data, tf.data.Dataset):
        model.fit(data, steps_per_epoch=TRAIN_STEPS, epochs=1, callbacks=[clock], verbose=0)
    else:
        model.fit(data, data, batch_size=BATCH_SIZE, epochs=1, callbacks=[clock], verbose=0)
    e = clock.ends
    return model, (e[-1] - e[4]) / (len(e) - 5)


def score_recording(model, recording):
    windows = sliding_window_view(recording, WIN, axis=0)[::STRIDE]  # (n, C, WIN)
    windows = np.ascontiguousarray(windows.transpose(0, 2, 1))
    recon = model.predict(windows, batch_size=512, verbose=0)
    return np.mean((recon - windows) ** 2, axis=(1, 2))


def record(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(obj) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    healthy = vibration(TRAIN_STEPS * BATCH_SIZE * WIN // 4 + WIN, rng)
    train_x = sliding_window_view(healthy, WIN, axis=0)[:: WIN // 4][: TRAIN_STEPS * BATCH_SIZE]
    train_x = np.ascontiguousarray(train_x.transpose(0, 2, 1))
    recording = vibration(RECORDING_LEN, rng, fault_at=RECORDING_LEN * 3 // 4)

    t0 = time.perf_counter()
    model, full = fit(train_x)
    t1 = time.perf_counter()
    errors = score_recording(model, recording)
    t2 = time.perf_counter()
    record({"steps_per_second": 1.0 / full})
    threshold = np.percentile(errors[: len(errors) // 2], 99.5)
    flagged = np.flatnonzero(errors > threshold)
    first = flagged[flagged > len(errors) // 2][:1]
    msg = (
        f"turbine: train {TRAIN_STEPS} steps {t1 - t0:.1f}s ({1 / full:.2f} steps/s), "
        f"scored {len(errors)} windows in {t2 - t1:.1f}s, {len(flagged)} flagged, "
        f"first late alarm at window {first.tolist()}"
    )
    if args.truth:
        cached = tf.data.Dataset.from_tensors((train_x[:BATCH_SIZE], train_x[:BATCH_SIZE]))
        _, compute = fit(cached.repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        record({"truth_input_fraction": frac})
        msg += f", truth_input_fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
