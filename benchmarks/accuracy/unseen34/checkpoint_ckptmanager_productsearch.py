"""Product-search query tower: maps bag-of-token queries to one of many
product categories, with a large embedding table and output layer.

The custom loop saves a full training checkpoint (model + Adam slots) with
tf.train.CheckpointManager every few steps, keeping the last three, because
the preemptible training nodes the team used were often reclaimed.  The
checkpoint also tracks the catalogue-embedding cache used for retrieval
evaluation, so every save writes the model, the optimizer slots and the cache.
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

VOCAB = 60000
CATEGORIES = 8000
EMB = 192
QLEN = 16
BATCH = 64
STEPS = 36
EPOCHS = 2
SAVE_EVERY = 2
CATALOGUE = 300000


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def build_model():
    inp = keras.Input((QLEN,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, EMB)(inp)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(CATEGORIES)(x))


def run(next_batch, ckpt_dir, catalogue):
    keras.utils.set_random_seed(0)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt.build(model.trainable_variables)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt, catalogue=catalogue,
                               step=tf.Variable(0, dtype=tf.int64))
    manager = tf.train.CheckpointManager(ckpt, ckpt_dir, max_to_keep=3)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, t_save = [], 0.0
    t0 = time.perf_counter()
    for epoch in range(EPOCHS):
        last = None
        for i in range(STEPS):
            x, y = next_batch()
            loss = float(train_step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            ckpt.step.assign_add(1)
            if (i + 1) % SAVE_EVERY == 0:
                manager.save(checkpoint_number=int(ckpt.step))
            last = time.perf_counter()
            t_save += last - now
    return seconds_per_step(gaps), time.perf_counter() - t0, t_save, loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="u34_checkpoint_ckptmanager_productsearch_")
    try:
        rng = np.random.default_rng(0)
        q = rng.zipf(1.3, size=(8192, QLEN)) % VOCAB
        cat = (q[:, 0] * 7 + q[:, 1]) % CATEGORIES
        q, cat = tf.constant(q.astype(np.int32)), tf.constant(cat.astype(np.int32))
        ds = iter(tf.data.Dataset.from_tensor_slices((q, cat)).shuffle(8192, seed=1).repeat().batch(BATCH))
        catalogue = tf.Variable(tf.random.normal((CATALOGUE, 128), seed=2), trainable=False)
        full, wall, t_save, loss = run(lambda: next(ds), os.path.join(root, "full"), catalogue)
        emit({"steps_per_second": 1.0 / full})
        msg = (f"productsearch: {1.0 / full:.2f} steps/s, loop {wall:.1f}s, saves {t_save:.1f}s "
               f"({100 * t_save / wall:.0f}% of loop), loss {loss:.4f}")
        if args.truth:
            one = (q[:BATCH], cat[:BATCH])
            compute, _, _, _ = run(lambda: one, os.path.join(root, "truth"), catalogue)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction {frac:.3f} (full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms)"
        print(msg)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
