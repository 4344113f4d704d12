"""Denoising autoencoder for single-cell gene expression profiles, checkpointed with CheckpointManager."""

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
parser.add_argument("--cells", type=int, default=2048)
parser.add_argument("--genes", type=int, default=12000)
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--steps", type=int, default=24)
parser.add_argument("--save-every", type=int, default=1)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


rng = np.random.default_rng(8)
counts = rng.poisson(
    rng.gamma(0.5, 2.0, size=(1, args.genes)), size=(args.cells, args.genes)
).astype(np.float32)
expr = np.log1p(counts)
train_ds = (
    tf.data.Dataset.from_tensor_slices(expr)
    .shuffle(1024)
    .repeat()
    .batch(args.batch_size, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)


def build_model():
    inputs = keras.Input(shape=(args.genes,))
    x = keras.layers.GaussianNoise(0.3)(inputs)
    x = keras.layers.Dense(1024, activation="relu")(x)
    z = keras.layers.Dense(64, name="latent")(x)
    x = keras.layers.Dense(1024, activation="relu")(z)
    outputs = keras.layers.Dense(args.genes, activation="softplus")(x)
    return keras.Model(inputs, outputs, name="scDAE")


def train(dataset, ckpt_dir):
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    ckpt = tf.train.Checkpoint(model=model, optimizer=optimizer)
    manager = tf.train.CheckpointManager(ckpt, ckpt_dir, max_to_keep=3)

    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            recon = model(x, training=True)
            loss = tf.reduce_mean(tf.square(recon - x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    save_time = 0.0
    for step, x in enumerate(dataset):
        if step >= args.steps:
            break
        loss = float(train_step(x))
        if (step + 1) % args.save_every == 0:
            t = time.perf_counter()
            manager.save(checkpoint_number=step + 1)
            save_time += time.perf_counter() - t
        times.append(time.perf_counter())
        if step % 20 == 0:
            print(f"step {step:3d}  mse {loss:.4f}")
    sec = (times[-1] - times[4]) / (len(times) - 5)
    return sec, save_time, times[-1] - times[0], model.count_params()


ckpt_root = tempfile.mkdtemp(prefix="u19_ckpt_expression_")
try:
    sec_full, saved, total, n_params = train(train_ds, os.path.join(ckpt_root, "run1"))
    report("steps_per_second", 1.0 / sec_full)
    print(
        f"scDAE ({n_params / 1e6:.1f}M params): {args.steps} steps, {sec_full * 1000:.1f} ms/step, "
        f"checkpointing {saved:.1f}s of {total:.1f}s training ({saved / total:.0%})"
    )
    if args.truth:
        batch = next(iter(train_ds))
        sec_cached, _, _, _ = train(
            tf.data.Dataset.from_tensors(batch).repeat(), os.path.join(ckpt_root, "run2")
        )
        frac = min(1.0, max(0.0, (sec_full - sec_cached) / sec_full))
        report("truth_input_fraction", frac)
        print(
            f"truth: full {sec_full * 1000:.1f} ms, cached {sec_cached * 1000:.1f} ms, input fraction {frac:.3f}"
        )
finally:
    shutil.rmtree(ckpt_root, ignore_errors=True)
