"""Two-tower-ish product recommender trained with frequent full-model snapshots."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_USERS = 100000
N_ITEMS = 60000
EMBED_DIM = 64
BATCH_SIZE = 512
STEPS = 60
SAVE_EVERY = 5


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())


class SnapshotEvery(keras.callbacks.Callback):
    def __init__(self, directory, every):
        super().__init__()
        self.directory = directory
        self.every = every
        self.seconds = 0.0
        self.count = 0

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % self.every == 0:
            t0 = time.perf_counter()
            self.model.save(os.path.join(self.directory, f"model_{batch + 1}.keras"))
            self.seconds += time.perf_counter() - t0
            self.count += 1


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


def build_model():
    user = keras.Input(shape=(), dtype="int32", name="user_id")
    item = keras.Input(shape=(), dtype="int32", name="item_id")
    ctx = keras.Input(shape=(16,), name="context")
    u = keras.layers.Embedding(N_USERS, EMBED_DIM, name="user_embedding")(user)
    i = keras.layers.Embedding(N_ITEMS, EMBED_DIM, name="item_embedding")(item)
    c = keras.layers.Dense(32, activation="relu")(ctx)
    x = keras.layers.Concatenate()([u, i, c, u * i])
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid", name="purchase")(x)
    model = keras.Model([user, item, ctx], out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC()])
    return model


def make_interactions(rng, n):
    users = rng.integers(0, N_USERS, n).astype(np.int32)
    items = rng.integers(0, N_ITEMS, n).astype(np.int32)
    ctx = rng.normal(0, 1, (n, 16)).astype(np.float32)
    y = ((users % 7 == items % 7) | (ctx[:, 0] > 1.2)).astype(np.float32)
    return {"user_id": users, "item_id": items, "context": ctx}, y


def train(dataset, ckpt_dir):
    os.makedirs(ckpt_dir, exist_ok=True)
    model = build_model()
    saver = SnapshotEvery(ckpt_dir, SAVE_EVERY)
    clock = StepClock()
    t0 = time.perf_counter()
    model.fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[saver, clock], verbose=0)
    total = time.perf_counter() - t0
    return float(np.mean(np.diff(clock.times)[5:])), saver, total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    keras.utils.set_random_seed(0)
    features, labels = make_interactions(np.random.default_rng(0), BATCH_SIZE * STEPS)
    ds = (
        tf.data.Dataset.from_tensor_slices((features, labels))
        .shuffle(8192, seed=0)
        .repeat()
        .batch(BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )
    tmp = tempfile.mkdtemp(prefix="u27_checkpoint_snapshots_recsys_")
    try:
        full, saver, total = train(ds, os.path.join(tmp, "run"))
        append_result(steps_per_second=1.0 / full)
        size_mb = os.path.getsize(os.path.join(tmp, "run", f"model_{SAVE_EVERY}.keras")) / 2**20
        msg = (f"recsys: {1.0 / full:.2f} steps/s; {saver.count} snapshots of {size_mb:.0f} MB "
               f"took {saver.seconds:.1f}s of {total:.1f}s fit ({saver.seconds / total:.0%})")

        if args.truth:
            batch = next(iter(ds))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            compute, saver2, total2 = train(cached, os.path.join(tmp, "cached_batch_run"))
            frac = min(max((full - compute) / full, 0.0), 1.0)
            append_result(truth_input_fraction=frac)
            msg += (f"; cached-batch run saves {saver2.seconds:.1f}s of {total2:.1f}s"
                    f", truth_input_fraction={frac:.3f}")
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
