"""Gearbox fault classifier for wind-turbine vibration recordings.

Each example is a raw accelerometer trace that is turned into a log
spectrogram plus a few envelope statistics on the fly.
"""

import argparse
import json
import os
import time

import numpy as np
import keras
import tensorflow as tf

BATCH_SIZE = 32
STEPS = 80
SIGNAL_LEN = 8192
FRAME = 256
HOP = 128
N_CLASSES = 5


class TurbineVibrationSequence(keras.utils.PyDataset):
    def __init__(self, n_batches, batch_size, seed=0, **kwargs):
        super().__init__(**kwargs)
        self.n_batches = n_batches
        self.batch_size = batch_size
        self.seed = seed
        self.window = np.hanning(FRAME).astype(np.float32)

    def __len__(self):
        return self.n_batches

    def _raw_trace(self, rng, label):
        t = np.arange(SIGNAL_LEN) / 12800.0
        shaft = 18.0 + rng.normal(0, 0.5)
        sig = np.sin(2 * np.pi * shaft * t) + 0.3 * np.sin(2 * np.pi * 3 * shaft * t)
        if label > 0:
            fault_freq = shaft * (2.5 + label)
            impulses = (np.sin(2 * np.pi * fault_freq * t) > 0.995).astype(np.float64)
            sig = sig + 2.0 * np.convolve(impulses, np.exp(-np.arange(64) / 8.0), mode="same")
        return sig + rng.normal(0, 0.4, SIGNAL_LEN)

    def _features(self, sig):
        sig = sig - np.polyval(np.polyfit(np.arange(SIGNAL_LEN), sig, 3), np.arange(SIGNAL_LEN))
        frames = []
        for start in range(0, SIGNAL_LEN - FRAME + 1, HOP):
            seg = sig[start : start + FRAME] * self.window
            spec = np.abs(np.fft.rfft(seg)) ** 2
            frames.append(np.log1p(spec[:128]))
        spec = np.stack(frames).astype(np.float32)
        spec = (spec - spec.mean()) / (spec.std() + 1e-6)
        envelope = np.abs(sig)
        stats = []
        for k in range(0, SIGNAL_LEN, 512):
            chunk = envelope[k : k + 512]
            stats.append([chunk.mean(), chunk.std(), np.percentile(chunk, 95), chunk.max()])
        return spec, np.asarray(stats, dtype=np.float32).ravel()

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        specs, stats, labels = [], [], []
        for _ in range(self.batch_size):
            label = int(rng.integers(N_CLASSES))
            spec, st = self._features(self._raw_trace(rng, label))
            specs.append(spec)
            stats.append(st)
            labels.append(label)
        return (np.stack(specs), np.stack(stats)), np.asarray(labels, dtype=np.int32)


def build_model():
    spec_in = keras.Input(shape=(63, 128), name="spectrogram")
    stat_in = keras.Input(shape=(64,), name="envelope_stats")
    x = keras.layers.Conv1D(224, 5, padding="same", activation="relu")(spec_in)
    x = keras.layers.Conv1D(224, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(288, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    s = keras.layers.Dense(64, activation="relu")(stat_in)
    x = keras.layers.Concatenate()([x, s])
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model([spec_in, stat_in], out)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append((self.epoch, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        durations = [b - a for (e0, a), (e1, b) in zip(self.stamps, self.stamps[1:]) if e0 == e1]
        return float(np.mean(durations[skip - 1 :]))


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()
    print("TensorFlow", tf.__version__, "| Keras", keras.__version__)

    train_seq = TurbineVibrationSequence(STEPS, BATCH_SIZE, workers=2, use_multiprocessing=True)
    model = build_model()
    timer = StepTimer()
    t0 = time.perf_counter()
    model.fit(train_seq, epochs=1, callbacks=[timer], verbose=0)
    full = timer.seconds_per_step()
    print(f"trained {STEPS} steps in {time.perf_counter() - t0:.1f}s, {full * 1000:.1f} ms/step")
    append_result({"steps_per_second": 1.0 / full})

    if args.truth:
        (spec, stats), labels = TurbineVibrationSequence(1, BATCH_SIZE, seed=7)[0]
        cached = tf.data.Dataset.from_tensors(((spec, stats), labels)).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(cached, epochs=1, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        compute = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        append_result({"truth_input_fraction": frac})
        print(
            f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
            f"input fraction {frac:.2f}"
        )
    else:
        print(f"summary: {1.0 / full:.2f} steps/s")


if __name__ == "__main__":
    main()
