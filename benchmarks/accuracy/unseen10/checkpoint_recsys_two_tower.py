"""Two-tower retrieval model for a video platform, checkpointed every few batches.

A user tower (user-id embedding + watch-history features) and an item tower
(video-id embedding + category embedding) are trained on synthetic implicit-feedback
pairs with an in-batch softmax loss through ``model.fit`` on an in-memory
``tf.data`` pipeline. The embedding tables are large (250k users, 80k videos), and a
``ModelCheckpoint`` callback writes the full model (weights + optimizer state) to a
``.keras`` file every 2 batches, as a job on pre-emptible machines would.

Run ``python checkpoint_recsys_two_tower.py [--truth]``.
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf

N_USERS = 250_000
N_ITEMS = 80_000
N_CATEGORIES = 40
DIM = 48
BATCH = 512
STEPS = 60
SAVE_EVERY = 2


def synth_interactions(n, seed=0):
    rng = np.random.default_rng(seed)
    users = rng.zipf(1.3, size=n) % N_USERS
    items = rng.zipf(1.2, size=n) % N_ITEMS
    cats = items % N_CATEGORIES
    history = rng.normal(size=(n, 16)).astype(np.float32)
    return {"user": users, "history": history, "item": items, "category": cats}


class InBatchSoftmax(keras.layers.Layer):
    def call(self, user_vec, item_vec):
        logits = tf.matmul(user_vec, item_vec, transpose_b=True)
        labels = tf.range(tf.shape(logits)[0])
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        self.add_loss(tf.reduce_mean(loss))
        return logits


def build_model():
    user = keras.Input((), dtype="int64", name="user")
    history = keras.Input((16,), name="history")
    item = keras.Input((), dtype="int64", name="item")
    category = keras.Input((), dtype="int64", name="category")

    u = keras.layers.Embedding(N_USERS, DIM)(user)
    u = keras.layers.Concatenate()([u, keras.layers.Dense(32, activation="relu")(history)])
    u = keras.layers.Dense(DIM)(keras.layers.Dense(128, activation="relu")(u))
    u = keras.layers.UnitNormalization()(u)

    v = keras.layers.Embedding(N_ITEMS, DIM)(item)
    c = keras.layers.Embedding(N_CATEGORIES, 8)(category)
    v = keras.layers.Concatenate()([v, c])
    v = keras.layers.Dense(DIM)(keras.layers.Dense(128, activation="relu")(v))
    v = keras.layers.UnitNormalization()(v)

    logits = InBatchSoftmax()(u, v)
    model = keras.Model([user, history, item, category], logits)
    model.compile(optimizer=keras.optimizers.Adam(1e-3))
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.marks = []

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append(time.perf_counter())


class TimedCheckpoint(keras.callbacks.ModelCheckpoint):
    """ModelCheckpoint that also adds up how long the saving takes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.save_seconds = 0.0

    def on_train_batch_end(self, batch, logs=None):
        t0 = time.perf_counter()
        super().on_train_batch_end(batch, logs)
        self.save_seconds += time.perf_counter() - t0


def train(dataset, ckpt_dir):
    timer = StepTimer()
    saver = TimedCheckpoint(os.path.join(ckpt_dir, "two_tower_latest.keras"), save_freq=SAVE_EVERY)
    model = build_model()
    t0 = time.perf_counter()
    model.fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[timer, saver], verbose=0)
    fit_seconds = time.perf_counter() - t0
    m = timer.marks
    print(f"  checkpointing took {saver.save_seconds:.1f}s of {fit_seconds:.1f}s in fit")
    return (m[-1] - m[4]) / (len(m) - 5)


def put(entry):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(entry) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    features = synth_interactions(200_000)
    dataset = (
        tf.data.Dataset.from_tensor_slices(features)
        .shuffle(50_000)
        .repeat()
        .batch(BATCH, drop_remainder=True)
        .prefetch(tf.data.AUTOTUNE)
    )
    ckpt_dir = tempfile.mkdtemp(prefix="two_tower_ckpt_")
    try:
        full = train(dataset, ckpt_dir)
        put({"steps_per_second": 1 / full})
        size_mb = os.path.getsize(os.path.join(ckpt_dir, "two_tower_latest.keras")) / 2**20
        text = f"two-tower: {1 / full:.2f} steps/s, checkpoint {size_mb:.0f} MB every {SAVE_EVERY}"
        if args.truth:
            one = next(iter(dataset))
            compute = train(tf.data.Dataset.from_tensors(one).repeat(), ckpt_dir)
            frac = min(1.0, max(0.0, (full - compute) / full))
            put({"truth_input_fraction": frac})
            text += f"; full {full * 1e3:.0f} ms, cached {compute * 1e3:.0f} ms, input {frac:.3f}"
        print(text)
    finally:
        shutil.rmtree(ckpt_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
