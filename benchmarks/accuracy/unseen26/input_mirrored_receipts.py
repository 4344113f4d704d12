"""Receipt line-item categoriser trained with MirroredStrategy and a custom loop."""

import argparse
import json
import os
import re
import time
import zlib

import numpy as np
import tensorflow as tf
import keras

VOCAB = 20000
SEQ_LEN = 96
N_CATEGORIES = 12
BATCH_SIZE = 64
STEPS = 120
LR = 1e-3

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


strategy = tf.distribute.MirroredStrategy()
print("replicas:", strategy.num_replicas_in_sync)

# ---------------- data ----------------
WORDS = (
    "organic milk bread eggs cheddar cheese apples bananas chicken breast rice pasta sauce "
    "coffee beans tea bags detergent paper towels shampoo toothpaste batteries cable charger "
    "notebook pens beer wine water sparkling juice yogurt butter cereal oats frozen pizza "
    "salmon fillet tofu spinach lettuce tomatoes onions garlic potatoes dog food cat litter"
).split()
rng = np.random.default_rng(3)


def normalise(text):
    text = text.lower()
    text = re.sub(r"[^a-z0-9 ]+", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text


def char_ngrams(text, n_min=2, n_max=5):
    padded = f"#{text}#"
    out = []
    for n in range(n_min, n_max + 1):
        for i in range(len(padded) - n + 1):
            out.append(padded[i : i + n])
    return out


def receipt_generator():
    local = np.random.default_rng(11)
    while True:
        label = int(local.integers(N_CATEGORIES))
        n_words = int(local.integers(8, 16))
        words = [WORDS[(label * 3 + int(local.integers(12))) % len(WORDS)] for _ in range(n_words)]
        line = " ".join(words) + f" x{int(local.integers(1, 9))} @ ${local.uniform(0.5, 40):.2f}!!"
        grams = char_ngrams(normalise(line))
        ids = [zlib.crc32(g.encode()) % (VOCAB - 1) + 1 for g in grams]
        ids = sorted(set(ids), key=ids.index)[:SEQ_LEN]
        ids = ids + [0] * (SEQ_LEN - len(ids))
        yield np.asarray(ids, np.int32), np.int32(label)


dataset = tf.data.Dataset.from_generator(
    receipt_generator,
    output_signature=(
        tf.TensorSpec((SEQ_LEN,), tf.int32),
        tf.TensorSpec((), tf.int32),
    ),
).batch(BATCH_SIZE, drop_remainder=True)


# ---------------- model ----------------
def build_model():
    inp = keras.Input((SEQ_LEN,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, 64)(inp)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(N_CATEGORIES)(x)
    return keras.Model(inp, out)


def train(ds, tag):
    with strategy.scope():
        model = build_model()
        opt = keras.optimizers.Adam(LR)
        loss_obj = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def step_fn(inputs):
        x, y = inputs
        with tf.GradientTape() as tape:
            per_ex = loss_obj(y, model(x, training=True))
            loss = tf.nn.compute_average_loss(per_ex, global_batch_size=BATCH_SIZE)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def distributed_step(inputs):
        per_replica = strategy.run(step_fn, args=(inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    dist_dataset = strategy.experimental_distribute_dataset(ds.take(STEPS))
    times = []
    for i, batch in enumerate(dist_dataset):
        loss = float(distributed_step(batch))
        times.append(time.perf_counter())
        if i % 20 == 0:
            print(f"[{tag}] step {i} loss={loss:.4f}")
    return (times[-1] - times[5]) / (len(times) - 6)


full = train(dataset, "receipts")
write_out({"steps_per_second": 1.0 / full})

if args.truth:
    batch = next(iter(dataset))
    cached = tf.data.Dataset.from_tensors(batch).repeat()
    compute = train(cached, "cached")
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    print(f"full={full:.4f}s/step compute={compute:.4f}s/step input_fraction={frac:.3f}")
else:
    print(f"done: {1.0 / full:.2f} steps/s ({full:.4f} s/step)")
