"""Ad click-through-rate model with large hashed embedding tables, checkpointed every step."""

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
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=46)
parser.add_argument("--batch-size", type=int, default=2048)
args = parser.parse_args()

HASH_BUCKETS = [250_000, 100_000, 50_000]
EMBED_DIM = 32
NUM_DENSE = 13
NUM_ROWS = 50_000
BATCH = args.batch_size
STEPS = args.steps

rng = np.random.default_rng(31)
dense = rng.lognormal(0, 1, (NUM_ROWS, NUM_DENSE)).astype(np.float32)
cats = np.stack([rng.zipf(1.3, NUM_ROWS) % b for b in HASH_BUCKETS], axis=1).astype(np.int32)
clicks = (rng.random(NUM_ROWS) < 0.04).astype(np.float32)
train_ds = tf.data.Dataset.from_tensor_slices(((np.log1p(dense), cats), clicks))
train_ds = train_ds.shuffle(NUM_ROWS).repeat().batch(BATCH).prefetch(2)


class CTRModel(keras.Model):
    def __init__(self):
        super().__init__()
        self.tables = [keras.layers.Embedding(b, EMBED_DIM) for b in HASH_BUCKETS]
        self.bottom = keras.layers.Dense(EMBED_DIM, activation="relu")
        self.top = keras.Sequential(
            [
                keras.layers.Dense(512, activation="relu"),
                keras.layers.Dense(256, activation="relu"),
                keras.layers.Dense(1),
            ]
        )

    def call(self, inputs):
        dense_x, cat_x = inputs
        vecs = [self.bottom(dense_x)] + [t(cat_x[:, i]) for i, t in enumerate(self.tables)]
        stacked = tf.stack(vecs, axis=1)
        inter = tf.matmul(stacked, stacked, transpose_b=True)
        inter = tf.reshape(inter, (-1, len(vecs) * len(vecs)))
        return self.top(tf.concat([vecs[0], inter], axis=1))


def train(data, ckpt_dir):
    keras.utils.set_random_seed(10)
    model = CTRModel()
    optimizer = keras.optimizers.Adagrad(0.05)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
    ckpt = tf.train.Checkpoint(model=model, optimizer=optimizer)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y[:, None], model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    durations = []
    save_time = 0.0
    it = iter(data)
    last = time.perf_counter()
    for step in range(STEPS):
        x, y = next(it)
        loss = float(train_step(x, y))
        t = time.perf_counter()
        ckpt.write(os.path.join(ckpt_dir, "ctr"))
        now = time.perf_counter()
        if step >= 5:
            save_time += now - t
        durations.append(now - last)
        last = now
        if step % 10 == 0:
            print(f"step {step}: logloss={loss:.4f}")
    return float(np.mean(durations[5:])), save_time / max(1, STEPS - 5)


def append_out(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    tmp = tempfile.mkdtemp(prefix="u22_checkpoint_embedding_adclick_")
    try:
        full, save = train(train_ds, tmp)
        append_out({"steps_per_second": 1.0 / full})
        msg = (
            f"adclick: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step, "
            f"of which checkpoint write {save * 1000:.1f} ms = {save / full:.2f})"
        )
        if args.truth:
            batch = next(iter(train_ds))
            compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), tmp)
            frac = min(1.0, max(0.0, (full - compute) / full))
            append_out({"truth_input_fraction": frac})
            msg += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
