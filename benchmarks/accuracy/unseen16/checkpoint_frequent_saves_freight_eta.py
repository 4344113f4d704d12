"""Freight-truck arrival-time regression with a wide MLP, checkpointed during training."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import keras
import tensorflow as tf

N_ROWS = 8192
N_FEATURES = 64
BATCH_SIZE = 128
STEPS = 60
SAVE_EVERY = 2


def synth_trips(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N_ROWS, N_FEATURES)).astype(np.float32)
    w = rng.normal(size=(N_FEATURES,))
    y = (np.abs(x @ w) + 0.1 * rng.normal(size=N_ROWS)).astype(np.float32)
    return x, y


def build_model():
    inp = keras.Input(shape=(N_FEATURES,))
    x = keras.layers.Dense(2048, activation="relu")(inp)
    x = keras.layers.Dense(2048, activation="relu")(x)
    x = keras.layers.Dense(2048, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.begin = []
        self.durations = []

    def on_train_batch_begin(self, batch, logs=None):
        self.begin.append(time.perf_counter())

    def on_train_batch_end(self, batch, logs=None):
        self.durations.append(time.perf_counter() - self.begin[-1])

    def seconds_per_step(self, skip=5):
        return float(np.mean(self.durations[skip:]))


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def run(ds, ckpt_dir):
    model = build_model()
    timer = StepTimer()
    ckpt = keras.callbacks.ModelCheckpoint(
        os.path.join(ckpt_dir, "eta-{epoch:02d}-{batch:04d}.keras"), save_freq=SAVE_EVERY
    )
    t0 = time.perf_counter()
    model.fit(ds, epochs=1, steps_per_epoch=STEPS, callbacks=[timer, ckpt], verbose=0)
    wall = time.perf_counter() - t0
    return timer.seconds_per_step(), wall, sum(timer.durations)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    ckpt_dir = tempfile.mkdtemp(prefix="u16_checkpoint_freight_eta_")
    try:
        x, y = synth_trips()
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_ROWS).repeat().batch(BATCH_SIZE)
        ds = ds.prefetch(tf.data.AUTOTUNE)
        full, wall, step_total = run(ds, ckpt_dir)
        n_files = len(os.listdir(ckpt_dir))
        print(
            f"trained {STEPS} steps in {wall:.1f}s ({full * 1000:.1f} ms/step), "
            f"{n_files} checkpoints, outside-step share {(wall - step_total) / wall:.0%}"
        )
        append_result({"steps_per_second": 1.0 / full})

        if args.truth:
            cached = tf.data.Dataset.from_tensors((x[:BATCH_SIZE], y[:BATCH_SIZE])).repeat()
            compute, _, _ = run(cached, ckpt_dir)
            frac = min(1.0, max(0.0, (full - compute) / full))
            append_result({"truth_input_fraction": frac})
            print(
                f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
                f"input fraction {frac:.2f}"
            )
        else:
            print(f"summary: {1.0 / full:.2f} steps/s")
    finally:
        shutil.rmtree(ckpt_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
