"""Two-tower news recommender with weight checkpoints written every few batches."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--batch-size", type=int, default=512)
parser.add_argument("--interactions", type=int, default=24_576)
parser.add_argument("--save-freq", type=int, default=3)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

N_USERS = 150_000
N_ARTICLES = 250_000
DIM = 96

rng = np.random.default_rng(9)
users = rng.integers(0, N_USERS, size=args.interactions).astype(np.int32)
articles = rng.integers(0, N_ARTICLES, size=args.interactions).astype(np.int32)
clicked = ((users % 7 + articles % 5) % 3 == 0).astype(np.float32)

train_ds = (
    tf.data.Dataset.from_tensor_slices(({"user": users, "article": articles}, clicked))
    .shuffle(8192)
    .batch(args.batch_size, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)
steps_per_epoch = args.interactions // args.batch_size


def build_model():
    user_in = keras.Input((), dtype="int32", name="user")
    article_in = keras.Input((), dtype="int32", name="article")
    u = keras.layers.Embedding(N_USERS, DIM)(user_in)
    a = keras.layers.Embedding(N_ARTICLES, DIM)(article_in)
    u = keras.layers.Dense(DIM, activation="relu")(keras.layers.Dense(256, activation="relu")(u))
    a = keras.layers.Dense(DIM, activation="relu")(keras.layers.Dense(256, activation="relu")(a))
    score = keras.layers.Dot(axes=1)([u, a])
    model = keras.Model([user_in, article_in], keras.layers.Activation("sigmoid")(score))
    model.compile(
        optimizer=keras.optimizers.Adagrad(0.05),
        loss="binary_crossentropy",
        metrics=[keras.metrics.AUC(name="auc")],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.stamps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        durations, seen = [], 0
        for epoch_stamps in self.stamps:
            for i in range(len(epoch_stamps)):
                if seen >= skip and i > 0:
                    durations.append(epoch_stamps[i] - epoch_stamps[i - 1])
                seen += 1
        return float(np.mean(durations))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def train(ds, ckpt_dir):
    model = build_model()
    timer = StepTimer()
    callbacks = [timer]
    if args.save_freq > 0:
        callbacks.append(
            keras.callbacks.ModelCheckpoint(
                os.path.join(ckpt_dir, "recommender.weights.h5"),
                save_weights_only=True,
                save_freq=args.save_freq,
            )
        )
    t0 = time.perf_counter()
    model.fit(
        ds, epochs=args.epochs, steps_per_epoch=steps_per_epoch, callbacks=callbacks, verbose=2
    )
    print(f"fit took {time.perf_counter() - t0:.1f}s ({model.count_params() / 1e6:.1f}M params)")
    return timer.seconds_per_step()


tmpdir = tempfile.mkdtemp(prefix="u25_checkpoint_news_recsys_")
try:
    full = train(train_ds, tmpdir)
    report("steps_per_second", 1.0 / full)
    summary = f"recommender: {steps_per_epoch} steps/epoch, {full * 1000:.1f} ms/step"

    if args.truth:
        batch = next(iter(train_ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat(), tmpdir)
        fraction = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", fraction)
        summary += f", cached {compute * 1000:.1f} ms/step, input fraction {fraction:.2f}"
    print(summary)
finally:
    shutil.rmtree(tmpdir, ignore_errors=True)
