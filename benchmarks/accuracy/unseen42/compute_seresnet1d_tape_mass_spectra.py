"""Compound-class prediction from centroided mass spectra.

Spectra are binned to 1024 m/z bins and generated in memory as one float32
tensor; batches are plain slices of that tensor, prepared before training.
A custom @tf.function GradientTape loop trains a 1-D squeeze-and-excitation
ResNet over the spectra, so the step is dominated by convolution math.
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

SEED = 42
N = 2048
BINS = 1024
BATCH = 32
STEPS = 90
CLASSES = 12


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def se_res_block(x, ch, stride):
    sc = x
    h = keras.layers.Conv1D(ch, 7, strides=stride, padding="same", use_bias=False)(x)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.Activation("relu")(h)
    h = keras.layers.Conv1D(ch, 7, padding="same", use_bias=False)(h)
    h = keras.layers.BatchNormalization()(h)
    s = keras.layers.GlobalAveragePooling1D()(h)
    s = keras.layers.Dense(ch // 8, activation="relu")(s)
    s = keras.layers.Dense(ch, activation="sigmoid")(s)
    h = keras.layers.Multiply()([h, keras.layers.Reshape((1, ch))(s)])
    if stride != 1 or sc.shape[-1] != ch:
        sc = keras.layers.Conv1D(ch, 1, strides=stride, use_bias=False)(sc)
        sc = keras.layers.BatchNormalization()(sc)
    return keras.layers.Activation("relu")(keras.layers.Add()([h, sc]))


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((BINS, 1))
    x = keras.layers.Conv1D(32, 11, strides=2, padding="same", activation="relu")(inp)
    for ch, stride in ((32, 1), (64, 2), (64, 1), (128, 2), (128, 1)):
        x = se_res_block(x, ch, stride)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(CLASSES)(x)
    return keras.Model(inp, out)


def make_data(rng):
    y = rng.integers(0, CLASSES, N)
    peaks = rng.integers(0, BINS, (CLASSES, 6))
    x = np.abs(rng.normal(0, 0.02, (N, BINS))).astype(np.float32)
    for i in range(N):
        x[i, peaks[y[i]]] += rng.uniform(0.3, 1.0, 6)
        x[i, rng.integers(0, BINS, 10)] += rng.uniform(0, 0.4, 10)
    x /= x.max(axis=1, keepdims=True)
    return tf.constant(x[..., None]), tf.constant(y.astype(np.int32))


def train(batches):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss = float("nan")
    for step in range(STEPS):
        x, y = batches(step)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(gaps.mean()), loss


def main():
    truth = "--truth" in sys.argv
    x, y = make_data(np.random.default_rng(SEED))
    nb = N // BATCH
    sliced = [(x[i * BATCH:(i + 1) * BATCH], y[i * BATCH:(i + 1) * BATCH]) for i in range(nb)]
    full, loss = train(lambda step: sliced[step % nb])
    emit({"steps_per_second": 1.0 / full})
    msg = "spectra-seresnet: %.1f ms/step loss=%.3f" % (full * 1e3, loss)
    if truth:
        one = sliced[0]
        compute, _ = train(lambda step: one)
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        msg += " compute=%.1f ms/step truth_input_fraction=%.3f" % (compute * 1e3, frac)
    print(msg)


if __name__ == "__main__":
    main()
