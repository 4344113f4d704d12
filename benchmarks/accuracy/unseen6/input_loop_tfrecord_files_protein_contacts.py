"""Predicts residue contact maps of protein fragments stored one per TFRecord file."""

import argparse
import atexit
import os
import shutil
import statistics
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, report

PROTEINS, CROP, BATCH, AMINO, PROJ = 900, 32, 16, 21, 6


def write_proteins(folder, seed=0):
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(PROTEINS):
        length = int(rng.integers(60, 200))
        steps = rng.normal(0, 1, (length, 3))
        steps = 3.8 * steps / np.linalg.norm(steps, axis=1, keepdims=True)
        coords = np.cumsum(steps * 0.6 + np.roll(steps, 1, axis=0) * 0.4, axis=0)
        example = tf.train.Example(
            features=tf.train.Features(
                feature={
                    "sequence": tf.train.Feature(
                        int64_list=tf.train.Int64List(value=rng.integers(0, AMINO, length))
                    ),
                    "coords": tf.train.Feature(
                        float_list=tf.train.FloatList(value=coords.astype(np.float32).ravel())
                    ),
                    "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"P%05d" % i])),
                }
            )
        )
        path = os.path.join(folder, f"protein_{i:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            writer.write(example.SerializeToString())
        paths.append(path)
    return paths


PROJECTION = tf.constant(np.random.default_rng(1).normal(0, 0.5, (AMINO, PROJ)), tf.float32)
SPEC = {
    "sequence": tf.io.VarLenFeature(tf.int64),
    "coords": tf.io.VarLenFeature(tf.float32),
    "name": tf.io.FixedLenFeature([], tf.string),
}


def crop_pairs(record):
    parsed = tf.io.parse_single_example(record, SPEC)
    sequence = tf.cast(tf.sparse.to_dense(parsed["sequence"]), tf.int32)
    coords = tf.reshape(tf.sparse.to_dense(parsed["coords"]), [-1, 3])
    start = tf.random.uniform([], 0, tf.shape(sequence)[0] - CROP, tf.int32)
    sequence = sequence[start : start + CROP]
    everything = tf.norm(coords[:, None, :] - coords[None, :, :] + 1e-6, axis=-1)
    burial = tf.reduce_sum(tf.cast(everything < 10.0, tf.float32), axis=1)[start : start + CROP]
    coords = coords[start : start + CROP]
    conformers = coords + tf.random.normal([8, CROP, 3], stddev=0.5)
    distance = tf.norm(conformers[:, :, None, :] - conformers[:, None, :, :] + 1e-6, axis=-1)
    probability = tf.reduce_mean(tf.sigmoid(2.0 * (8.0 - distance)), axis=0)
    contacts = tf.cast(probability > 0.5, tf.float32)
    one_hot = tf.one_hot(sequence, AMINO)
    profile = tf.nn.softmax(one_hot * 4.0 + tf.random.normal([CROP, AMINO]), axis=-1)
    rows = tf.tile(profile[:, None, :], [1, CROP, 1])
    cols = tf.tile(profile[None, :, :], [CROP, 1, 1])
    offset = tf.range(CROP, dtype=tf.float32)
    separation = tf.abs(offset[:, None] - offset[None, :])[..., None] / CROP
    separation = separation * tf.sqrt(burial[:, None, None] * burial[None, :, None]) / 20.0
    reduced = tf.matmul(profile, PROJECTION)
    coupling = tf.reshape(tf.einsum("ia,jb->ijab", reduced, reduced), [CROP, CROP, PROJ * PROJ])
    pairs = tf.concat([rows, cols, separation, coupling], axis=-1)
    return pairs, contacts[..., None]


def fragments(paths, seed=0):
    files = tf.data.Dataset.from_tensor_slices(paths).shuffle(PROTEINS, seed=seed).repeat()
    return tf.data.TFRecordDataset(files).map(crop_pairs).batch(BATCH)


def build_model():
    inputs = keras.Input((CROP, CROP, 2 * AMINO + 1 + PROJ * PROJ))
    h = keras.layers.Conv2D(16, 1, activation="relu")(inputs)
    for rate in (1, 2, 4):
        r = keras.layers.Conv2D(16, 3, padding="same", dilation_rate=rate, activation="relu")(h)
        h = keras.layers.Add()([h, r])
    return keras.Model(inputs, keras.layers.Conv2D(1, 1)(h))


model = build_model()
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
precision = keras.metrics.Precision(thresholds=0.0)


@tf.function
def train_step(pairs, contacts):
    with tf.GradientTape() as tape:
        logits = model(pairs, training=True)
        logits = (logits + tf.transpose(logits, [0, 2, 1, 3])) / 2
        loss = loss_fn(contacts, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    precision.update_state(contacts, logits)
    return loss


def train(data, steps, skip=0):
    """Trains ``steps`` steps; returns seconds per step from step ``skip`` on."""
    precision.reset_state()
    batches = iter(data)
    for step in range(steps):
        if step == skip:
            start = time.perf_counter()
        pairs, contacts = next(batches)
        loss = train_step(pairs, contacts)
    print(f"loss {float(loss):.3f} contact precision {float(precision.result()):.3f}")
    return (time.perf_counter() - start) / (steps - skip)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="proteins_")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    paths = write_proteins(folder)

    train(fragments(paths, 1), 3)
    report(steps_per_second=1 / train(fragments(paths), args.steps))
    if args.truth:
        cached = tf.data.Dataset.from_tensors(next(iter(fragments(paths, 2)))).repeat()
        full, compute = [], []
        for _ in range(3):
            full.append(train(fragments(paths, 3), args.steps, SKIP_STEPS))
            compute.append(train(cached, args.steps, SKIP_STEPS))
        f, c = statistics.median(full), statistics.median(compute)
        report(
            truth_full_seconds=f,
            truth_compute_seconds=c,
            truth_input_wait_fraction=max(0.0, (f - c) / f),
        )
