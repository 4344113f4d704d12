"""Protein family classification from pretrained sequence embeddings.

A wide MLP maps 1024-d per-protein embeddings to one of 2000 Pfam-like
families; training is checkpointed with tf.train.CheckpointManager so every
intermediate state can be inspected later.
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

EMBED_DIM = 1024
N_FAMILIES = 2000
N_PROTEINS = 20000
BATCH_SIZE = 32
STEPS = 80
SAVE_EVERY = 2
LR = 0.05

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

rng = np.random.default_rng(17)

# ---------------------------------------------------------------- data
families = rng.integers(0, N_FAMILIES, size=N_PROTEINS).astype(np.int32)
centroids = rng.normal(size=(N_FAMILIES, EMBED_DIM)).astype(np.float32)
embeddings = centroids[families] + rng.normal(0, 2.0, size=(N_PROTEINS, EMBED_DIM)).astype(
    np.float32
)


def make_dataset():
    ds = tf.data.Dataset.from_tensor_slices((embeddings, families))
    ds = ds.shuffle(N_PROTEINS, seed=0).repeat().batch(BATCH_SIZE, drop_remainder=True)
    return ds.prefetch(tf.data.AUTOTUNE)


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input(shape=(EMBED_DIM,))
    x = inputs
    for width in (2048, 2048, 2048):
        x = keras.layers.Dense(width, activation="relu")(x)
        x = keras.layers.LayerNormalization()(x)
    outputs = keras.layers.Dense(N_FAMILIES)(x)
    return keras.Model(inputs, outputs)


def train(batches, ckpt_dir, tag):
    model = build_model()
    optimizer = keras.optimizers.SGD(LR, momentum=0.9)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    step_var = tf.Variable(0, dtype=tf.int64)
    ckpt = tf.train.Checkpoint(model=model, optimizer=optimizer, step=step_var)
    manager = tf.train.CheckpointManager(ckpt, ckpt_dir, max_to_keep=None)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        step_var.assign_add(1)
        return loss

    times = []
    save_time = 0.0
    for step in range(STEPS):
        x, y = next(batches)
        loss = float(train_step(x, y))
        if (step + 1) % SAVE_EVERY == 0:
            t_save = time.perf_counter()
            manager.save(checkpoint_number=step + 1)
            if step >= 1:
                save_time += time.perf_counter() - t_save
        times.append(time.perf_counter())
        if step % 20 == 0:
            print(f"[{tag}] step {step} loss {loss:.3f}")
    n_params = model.count_params()
    train_time = times[-1] - times[0]
    print(
        f"[{tag}] {n_params:,} params, {len(manager.checkpoints)} checkpoints, "
        f"saving {save_time:.1f}s of {train_time:.1f}s training "
        f"({100 * save_time / train_time:.0f}%)"
    )
    return float(np.mean(np.diff(times)[4:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def repeat_batch(batch):
    while True:
        yield batch


tmp = tempfile.mkdtemp(prefix="u24_checkpoint_protein_")
try:
    full = train(iter(make_dataset()), os.path.join(tmp, "run"), "train")
    write_out({"steps_per_second": 1.0 / full})
    summary = f"protein families: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
    if args.truth:
        shutil.rmtree(os.path.join(tmp, "run"), ignore_errors=True)
        batch = next(iter(make_dataset()))
        compute = train(repeat_batch(batch), os.path.join(tmp, "cached"), "cached")
        frac = min(max((full - compute) / full, 0.0), 1.0)
        write_out({"truth_input_fraction": frac})
        summary += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
