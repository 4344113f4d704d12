"""Heartbeat arrhythmia classifier (single-lead ECG beats), validated on the full hold-out set."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

BEAT_LEN = 360
N_CLASSES = 5
N_TRAIN = 1600
N_VAL = 20_000
BATCH_SIZE = 64
EPOCHS = 3
SEED = 23


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    p.add_argument("--epochs", type=int, default=EPOCHS)
    return p.parse_args()


class StepClock(keras.callbacks.Callback):
    """Per-step wall times plus time spent in validation."""

    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None
        self.first_step_end = None
        self.val_seconds = 0.0
        self._val_start = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None  # first batch of an epoch includes iterator set-up

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.durations.append(now - self._last)
        self._last = now
        if self.first_step_end is None:
            self.first_step_end = now

    def on_test_begin(self, logs=None):
        self._val_start = time.perf_counter()

    def on_test_end(self, logs=None):
        self.val_seconds += time.perf_counter() - self._val_start

    def seconds_per_step(self):
        d = self.durations[5:]
        return float(np.mean(d)) if d else float("nan")


def synth_beats(rng, n):
    t = np.linspace(-1, 1, BEAT_LEN, dtype=np.float32)
    y = rng.integers(0, N_CLASSES, n)
    width = 0.02 + 0.015 * y
    qrs = np.exp(-(t[None, :] ** 2) / (2 * width[:, None] ** 2))
    p_wave = 0.2 * np.exp(-((t[None, :] + 0.4 + 0.05 * (y[:, None] == 3)) ** 2) / 0.005)
    t_wave = 0.3 * np.exp(-((t[None, :] - 0.45) ** 2) / 0.01) * (1 - 0.8 * (y[:, None] == 2))
    x = qrs + p_wave + t_wave + rng.normal(0, 0.05, (n, BEAT_LEN))
    return x[..., None].astype(np.float32), y.astype(np.int32)


def build_model():
    inp = keras.Input(shape=(BEAT_LEN, 1))
    x = inp
    for filters, k in ((32, 11), (64, 7), (128, 5), (128, 3)):
        x = keras.layers.Conv1D(filters, k, padding="same", activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    tf.random.set_seed(SEED)
    x_train, y_train = synth_beats(rng, N_TRAIN)
    x_val, y_val = synth_beats(rng, N_VAL)
    print(f"train beats {x_train.shape}, validation beats {x_val.shape}")

    model = build_model()
    clock = StepClock()
    t0 = time.perf_counter()
    hist = model.fit(
        x_train,
        y_train,
        batch_size=BATCH_SIZE,
        epochs=args.epochs,
        validation_data=(x_val, y_val),
        callbacks=[clock],
        verbose=0,
    )
    t_end = time.perf_counter()
    full = clock.seconds_per_step()
    after_first = t_end - clock.first_step_end
    print(
        f"trained {len(clock.durations) + args.epochs} steps in {t_end - t0:.1f}s, "
        f"val_acc={hist.history['val_accuracy'][-1]:.3f}"
    )
    print(
        f"validation: {clock.val_seconds:.1f}s of {after_first:.1f}s after first step "
        f"({100 * clock.val_seconds / after_first:.0f}%)"
    )
    out_path = os.environ.get("ACCURACY_OUT")
    if out_path:
        with open(out_path, "a") as f:
            f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")

    if args.truth:
        steps_per_epoch = int(np.ceil(N_TRAIN / BATCH_SIZE))
        batch = (x_train[:BATCH_SIZE], y_train[:BATCH_SIZE])
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        clock2 = StepClock()
        model2.fit(
            cached,
            epochs=args.epochs,
            steps_per_epoch=steps_per_epoch,
            callbacks=[clock2],
            verbose=0,
        )
        compute = clock2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        if out_path:
            with open(out_path, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        print(f"truth: full={full * 1000:.1f}ms compute={compute * 1000:.1f}ms frac={frac:.2f}")
    print(f"ecg CNN: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)")


if __name__ == "__main__":
    main()
