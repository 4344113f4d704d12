"""Two-tower-style rating model for a catalogue recommender, checkpointed during training."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_USERS = 150000
N_ITEMS = 100000
EMBED_DIM = 64
N_RATINGS = 65536
BATCH_SIZE = 512
EPOCHS = 2
STEPS_PER_EPOCH = 40
SAVE_EVERY = 4


def make_ratings(rng):
    users = rng.integers(0, N_USERS, N_RATINGS).astype("int32")
    items = rng.integers(0, N_ITEMS, N_RATINGS).astype("int32")
    ratings = (1 + 4 * ((users * 7 + items * 13) % 100) / 100.0).astype("float32")
    ratings += rng.normal(0, 0.3, N_RATINGS).astype("float32")
    return {"user": users, "item": items}, ratings


def build_model():
    user_in = keras.Input(shape=(), dtype="int32", name="user")
    item_in = keras.Input(shape=(), dtype="int32", name="item")
    u = keras.layers.Embedding(N_USERS, EMBED_DIM, name="user_embedding")(user_in)
    v = keras.layers.Embedding(N_ITEMS, EMBED_DIM, name="item_embedding")(item_in)
    x = keras.layers.Concatenate()([u, v, u * v])
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    model = keras.Model({"user": user_in, "item": item_in}, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", metrics=["mae"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.durations.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def run(train_data, ckpt_dir):
    model = build_model()
    timer = StepTimer()
    callbacks = [
        timer,
        keras.callbacks.ModelCheckpoint(
            os.path.join(ckpt_dir, "recsys_latest.keras"), save_freq=SAVE_EVERY
        ),
        keras.callbacks.BackupAndRestore(os.path.join(ckpt_dir, "backup")),
    ]
    t0 = time.perf_counter()
    model.fit(
        train_data,
        epochs=EPOCHS,
        steps_per_epoch=STEPS_PER_EPOCH,
        callbacks=callbacks,
        verbose=2,
    )
    return timer.seconds_per_step(), time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="u20_checkpoint_frequent_recsys_")
    try:
        features, ratings = make_ratings(np.random.default_rng(9))
        train_ds = (
            tf.data.Dataset.from_tensor_slices((features, ratings))
            .shuffle(N_RATINGS)
            .batch(BATCH_SIZE, drop_remainder=True)
            .repeat()
            .prefetch(tf.data.AUTOTUNE)
        )
        full, fit_s = run(train_ds, os.path.join(workdir, "run1"))
        size_mb = os.path.getsize(os.path.join(workdir, "run1", "recsys_latest.keras")) / 1e6
        write_out({"steps_per_second": 1.0 / full})
        summary = (
            f"full: {full * 1000:.1f} ms/step ({1.0 / full:.2f} steps/s), fit {fit_s:.1f}s, "
            f"checkpoint {size_mb:.0f} MB"
        )

        if args.truth:
            batch = next(iter(train_ds))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            compute, _ = run(cached, os.path.join(workdir, "run2"))
            frac = min(1.0, max(0.0, (full - compute) / full))
            write_out({"truth_input_fraction": frac})
            summary += f", compute: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(summary)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
