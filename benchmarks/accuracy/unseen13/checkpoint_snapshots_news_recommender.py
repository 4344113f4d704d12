"""Click-through model for news recommendation with periodic full-model snapshots."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np

import keras
import tensorflow as tf

N_USERS = 200_000
N_ARTICLES = 80_000
N_CATEGORIES = 30
EMBED_DIM = 64
N_IMPRESSIONS = 100_000
BATCH_SIZE = 512
STEPS_PER_EPOCH = 24
EPOCHS = 2
SNAPSHOT_EVERY = 2  # batches
SEED = 31


class StepClock(keras.callbacks.Callback):
    def __init__(self, skip=5):
        super().__init__()
        self.skip = skip
        self.offset = 0
        self.prev = None
        self.total = 0.0
        self.count = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.prev = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        done = self.offset + batch + 1
        if self.prev is not None and self.prev[0] >= self.skip:
            self.total += now - self.prev[1]
            self.count += done - self.prev[0]
        self.prev = (done, now)

    def on_epoch_end(self, epoch, logs=None):
        if self.prev is not None:
            self.offset = self.prev[0]

    def seconds_per_step(self):
        return self.total / max(self.count, 1)


class PeriodicSnapshot(keras.callbacks.Callback):
    """Save the full model every `every` batches so a crashed job can resume."""

    def __init__(self, folder, every):
        super().__init__()
        self.folder = folder
        self.every = every
        self.seen = 0
        self.save_seconds = 0.0
        self.n_saves = 0

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen % self.every == 0:
            t0 = time.perf_counter()
            self.model.save(os.path.join(self.folder, "recommender_latest.keras"))
            self.save_seconds += time.perf_counter() - t0
            self.n_saves += 1


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


# ---------------------------------------------------------------- data
def make_impressions(seed):
    rng = np.random.default_rng(seed)
    users = rng.zipf(1.3, N_IMPRESSIONS) % N_USERS
    articles = rng.zipf(1.2, N_IMPRESSIONS) % N_ARTICLES
    categories = articles % N_CATEGORIES
    dwell = rng.exponential(30, N_IMPRESSIONS).astype("float32")
    clicked = ((users + 3 * categories) % 7 < 2).astype("float32")
    features = {
        "user": users.astype("int32"),
        "article": articles.astype("int32"),
        "category": categories.astype("int32"),
        "dwell": np.log1p(dwell)[:, None],
    }
    return features, clicked


def make_dataset(features, labels):
    ds = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(50_000, seed=SEED)
    return ds.batch(BATCH_SIZE, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE)


# ---------------------------------------------------------------- model
def build_model():
    user = keras.Input(shape=(), dtype="int32", name="user")
    article = keras.Input(shape=(), dtype="int32", name="article")
    category = keras.Input(shape=(), dtype="int32", name="category")
    dwell = keras.Input(shape=(1,), name="dwell")
    u = keras.layers.Embedding(N_USERS, EMBED_DIM, name="user_embedding")(user)
    a = keras.layers.Embedding(N_ARTICLES, EMBED_DIM, name="article_embedding")(article)
    c = keras.layers.Embedding(N_CATEGORIES, 16, name="category_embedding")(category)
    x = keras.layers.Concatenate()([u, a, c, dwell, u * a])
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    outputs = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model([user, article, category, dwell], outputs, name="news_ctr")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="binary_crossentropy",
        metrics=[keras.metrics.AUC(name="auc")],
    )
    return model


def train(dataset, folder):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    clock = StepClock()
    snapshots = PeriodicSnapshot(folder, SNAPSHOT_EVERY)
    t0 = time.perf_counter()
    model.fit(
        dataset,
        steps_per_epoch=STEPS_PER_EPOCH,
        epochs=EPOCHS,
        callbacks=[clock, snapshots],
        verbose=2,
    )
    fit_seconds = time.perf_counter() - t0
    return clock.seconds_per_step(), snapshots, fit_seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="u13_newsrec_")
    try:
        features, labels = make_impressions(SEED)
        print(f"impressions: {len(labels):,}, click rate {labels.mean():.3f}")

        sec, snaps, fit_s = train(make_dataset(features, labels), folder)
        append_result(steps_per_second=1.0 / sec)
        summary = (
            f"news ctr: {sec * 1000:.1f} ms/step, {snaps.n_saves} snapshots took "
            f"{snaps.save_seconds:.1f}s of {fit_s:.1f}s fit ({snaps.save_seconds / fit_s:.0%})"
        )

        if args.truth:
            batch = next(iter(make_dataset(features, labels)))
            compute, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), folder)
            frac = min(max((sec - compute) / sec, 0.0), 1.0)
            append_result(truth_input_fraction=frac)
            summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(summary)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
