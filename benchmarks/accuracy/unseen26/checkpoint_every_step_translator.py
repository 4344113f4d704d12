"""Small transformer translation model with a checkpoint written after every step."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

VOCAB = 20000
SEQ_LEN = 16
D_MODEL = 256
N_HEADS = 4
N_LAYERS = 2
BATCH_SIZE = 16
STEPS = 36

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


# ---------------- data ----------------
rng = np.random.default_rng(2)
src = rng.integers(1, VOCAB, size=(BATCH_SIZE * STEPS, SEQ_LEN)).astype(np.int32)
tgt = np.roll(src, 1, axis=1)
train_ds = (
    tf.data.Dataset.from_tensor_slices((src, tgt))
    .shuffle(len(src))
    .batch(BATCH_SIZE, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)


# ---------------- model ----------------
def build_model():
    inp = keras.Input((SEQ_LEN,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, D_MODEL)(inp)
    for _ in range(N_LAYERS):
        a = keras.layers.MultiHeadAttention(N_HEADS, D_MODEL // N_HEADS)(x, x)
        x = keras.layers.LayerNormalization()(x + a)
        f = keras.layers.Dense(4 * D_MODEL, activation="relu")(x)
        f = keras.layers.Dense(D_MODEL)(f)
        x = keras.layers.LayerNormalization()(x + f)
    out = keras.layers.Dense(VOCAB)(x)
    return keras.Model(inp, out)


loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def run(batches, tag, ckpt_root):
    model = build_model()
    opt = keras.optimizers.Adam(1e-4)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    prefix = os.path.join(ckpt_root, tag, "ckpt")

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    save_time = 0.0
    start = time.perf_counter()
    for step, (x, y) in enumerate(batches):
        loss = float(train_step(x, y))
        t = time.perf_counter()
        ckpt.save(prefix)
        save_time += time.perf_counter() - t
        times.append(time.perf_counter())
        if step % 10 == 0:
            print(f"[{tag}] step {step} loss={loss:.4f}")
    total = time.perf_counter() - start
    print(
        f"[{tag}] params={model.count_params():,} total={total:.1f}s saving={save_time:.1f}s "
        f"({save_time / total:.0%})"
    )
    shutil.rmtree(os.path.join(ckpt_root, tag), ignore_errors=True)
    return (times[-1] - times[5]) / (len(times) - 6)


ckpt_dir = tempfile.mkdtemp(prefix="u26_checkpoint_every_step_translator_")
try:
    full = run(train_ds, "translator", ckpt_dir)
    write_out({"steps_per_second": 1.0 / full})
    if args.truth:
        xb, yb = next(iter(train_ds))
        cached = tf.data.Dataset.from_tensors((xb, yb)).repeat(STEPS)
        compute = run(cached, "cached", ckpt_dir)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        write_out({"truth_input_fraction": frac})
        print(f"full={full:.4f}s/step compute={compute:.4f}s/step input_fraction={frac:.3f}")
    else:
        print(f"done: {1.0 / full:.2f} steps/s ({full:.4f} s/step)")
finally:
    shutil.rmtree(ckpt_dir, ignore_errors=True)
