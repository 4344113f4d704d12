# Classifies DNA reads as coding / non-coding with a hand-written training loop. Each read is
# turned into k-mer counts and GC/ORF statistics in plain Python inside a generator that
# tf.data.Dataset.from_generator wraps; the loop iterates the batched dataset.
import itertools
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, TRUTH, report

K = 4
KMERS = {"".join(p): i for i, p in enumerate(itertools.product("ACGT", repeat=K))}
STOPS = {"TAA", "TAG", "TGA"}
READ_LENGTH = 150
rng = np.random.default_rng(0)
reads = [
    "".join(rng.choice(list("ACGT"), size=READ_LENGTH, p=p))
    for p in ([0.3, 0.2, 0.2, 0.3], [0.2, 0.3, 0.3, 0.2]) * 1500
]
labels = [i % 2 for i in range(len(reads))]


def longest_orf(read):
    best = 0
    for frame in range(3):
        run = 0
        for i in range(frame, len(read) - 2, 3):
            run = 0 if read[i : i + 3] in STOPS else run + 1
            best = max(best, run)
    return best


def featurise(read):
    counts = np.zeros(len(KMERS), np.float32)
    for i in range(len(read) - K + 1):
        counts[KMERS[read[i : i + K]]] += 1
    counts /= len(read) - K + 1
    gc = (read.count("G") + read.count("C")) / len(read)
    rev = read[::-1].translate(str.maketrans("ACGT", "TGCA"))
    stats = [
        gc,
        longest_orf(read) / 50.0,
        longest_orf(rev) / 50.0,
        read.count("CG") / len(read),
        max(len(r) for r in read.split("A")) / 20.0,
    ]
    return np.concatenate([counts, np.asarray(stats, np.float32)])


def examples():
    order = np.random.default_rng(1)
    while True:
        for i in order.permutation(len(reads)):
            yield featurise(reads[i]), np.float32(labels[i])


def dataset():
    signature = (tf.TensorSpec((len(KMERS) + 5,), tf.float32), tf.TensorSpec((), tf.float32))
    return tf.data.Dataset.from_generator(examples, output_signature=signature).batch(64)


model = keras.Sequential(
    [
        keras.Input((len(KMERS) + 5,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dropout(0.2),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ]
)
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
accuracy = keras.metrics.BinaryAccuracy(threshold=0.0)


@tf.function
def train_step(x, y):
    y = y[:, None]
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    accuracy.update_state(y, logits)
    return loss


def train(data, steps, skip=0):
    """Seconds per step over ``steps`` steps, timed from step ``skip`` on."""
    for step, (x, y) in enumerate(data):
        if step == skip:
            start = time.perf_counter()
        if step == steps:
            break
        train_step(x, y)
    return (time.perf_counter() - start) / (steps - skip)


train(dataset(), 3)
report(steps_per_second=1 / train(dataset(), 900))
print("train accuracy", float(accuracy.result()))
if TRUTH:
    cached = tf.data.Dataset.from_tensors(next(iter(dataset()))).repeat()
    full, compute = [], []
    for _ in range(3):
        full.append(train(dataset(), 30, SKIP_STEPS))
        compute.append(train(cached, 30, SKIP_STEPS))
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
