"""Keyword spotting on log-mel spectrograms with a distribution strategy.

One-second utterances (49 frames x 40 mel bands) are cached in memory and a
CNN is trained with a custom loop under tf.distribute.MirroredStrategy so the
same script scales to several GPUs.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_CLIPS = 6000
FRAMES, MELS = 49, 40
N_KEYWORDS = 12
GLOBAL_BATCH = 64
STEPS = 150
LR = 1e-3

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

strategy = tf.distribute.MirroredStrategy()
print("replicas in sync:", strategy.num_replicas_in_sync)

# ---------------------------------------------------------------- data
rng = np.random.default_rng(8)
labels = rng.integers(0, N_KEYWORDS, size=N_CLIPS).astype(np.int32)
mels = rng.normal(0, 1, size=(N_CLIPS, FRAMES, MELS, 1)).astype(np.float32)
for i in range(N_CLIPS):
    band = 2 + 3 * labels[i]
    mels[i, 10:40, band : band + 3, 0] += 2.5


def make_dataset():
    ds = tf.data.Dataset.from_tensor_slices((mels, labels)).cache()
    ds = ds.shuffle(N_CLIPS, seed=0).repeat()
    return ds.batch(GLOBAL_BATCH, drop_remainder=True).prefetch(tf.data.AUTOTUNE)


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input(shape=(FRAMES, MELS, 1))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    outputs = keras.layers.Dense(N_KEYWORDS)(x)
    return keras.Model(inputs, outputs)


def train(dataset, tag):
    with strategy.scope():
        model = build_model()
        optimizer = keras.optimizers.Adam(LR)
        loss_obj = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def step_fn(x, y):
        with tf.GradientTape() as tape:
            per_example = loss_obj(y, model(x, training=True))
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def train_step(iterator):
        x, y = next(iterator)
        per_replica = strategy.run(step_fn, args=(x, y))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    iterator = iter(strategy.experimental_distribute_dataset(dataset))
    times = []
    for step in range(STEPS):
        loss = float(train_step(iterator))
        times.append(time.perf_counter())
        if step % 50 == 0:
            print(f"[{tag}] step {step} loss {loss:.4f}")
    return float(np.mean(np.diff(times)[4:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


full = train(make_dataset(), "train")
write_out({"steps_per_second": 1.0 / full})
summary = f"keyword spotting: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

if args.truth:
    batch = next(iter(make_dataset()))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat(), "cached")
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"

print(summary)
