"""Day-ahead load forecasting for electrical substations (GRU over hourly history)."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_TRAIN = 6144
N_VAL = 30000
HISTORY = 72
HORIZON = 24
N_FEATURES = 6
BATCH_SIZE = 64
EPOCHS = 3
STEPS_PER_EPOCH = 40


def make_windows(n, rng):
    t0 = rng.uniform(0, 24 * 365, n)[:, None]
    t = t0 + np.arange(HISTORY + HORIZON)[None, :]
    daily = np.sin(2 * np.pi * t / 24.0)
    weekly = 0.4 * np.sin(2 * np.pi * t / 168.0)
    temp = 15 + 10 * np.sin(2 * np.pi * t / 8760.0) + rng.normal(0, 2, t.shape)
    load = 1.0 + 0.5 * daily + weekly + 0.02 * np.abs(temp - 18) + rng.normal(0, 0.05, t.shape)
    feats = np.stack(
        [load, temp / 30.0, daily, weekly, np.cos(2 * np.pi * t / 24.0), (t % 168 >= 120) * 1.0],
        axis=-1,
    ).astype(np.float32)
    return feats[:, :HISTORY], load[:, HISTORY:].astype(np.float32)


def build_model():
    inp = keras.Input(shape=(HISTORY, N_FEATURES))
    x = keras.layers.Conv1D(32, 5, padding="causal", activation="relu")(inp)
    x = keras.layers.GRU(64)(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(HORIZON)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", metrics=["mae"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None
        self.eval_seconds = 0.0

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_begin(self, batch, logs=None):
        if self._last is None:
            self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if not self.durations:
            self.first_step_end = now
        self.durations.append(now - self._last)
        self._last = now

    def on_train_end(self, logs=None):
        self.fit_end = time.perf_counter()

    def on_test_begin(self, logs=None):
        self._eval_start = time.perf_counter()

    def on_test_end(self, logs=None):
        self.eval_seconds += time.perf_counter() - self._eval_start

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def train(train_ds, val_ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(
        train_ds,
        steps_per_epoch=STEPS_PER_EPOCH,
        epochs=EPOCHS,
        validation_data=val_ds,
        callbacks=[timer],
        verbose=2,
    )
    return model, timer, hist.history["val_mae"][-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(12)
    x_train, y_train = make_windows(N_TRAIN, rng)
    x_val, y_val = make_windows(N_VAL, rng)
    train_ds = (
        tf.data.Dataset.from_tensor_slices((x_train, y_train))
        .shuffle(N_TRAIN, seed=0)
        .repeat()
        .batch(BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )
    val_ds = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(BATCH_SIZE)

    model, timer, val_mae = train(train_ds, val_ds)
    sec = timer.seconds_per_step()
    train_seconds = float(np.sum(timer.durations[1:]))
    after_first = timer.fit_end - timer.first_step_end
    print(
        f"real input: {sec * 1000:.1f} ms/step, val_mae {val_mae:.4f}, "
        f"train {train_seconds:.1f}s, validation {timer.eval_seconds:.1f}s "
        f"of {after_first:.1f}s after the first step"
    )
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": 1.0 / sec}) + "\n")
    if args.truth:
        batch = next(iter(train_ds))
        _, ctimer, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), val_ds)
        csec = ctimer.seconds_per_step()
        frac = min(1.0, max(0.0, (sec - csec) / sec))
        print(f"cached batch: {csec * 1000:.1f} ms/step, input fraction {frac:.3f}")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")


if __name__ == "__main__":
    main()
