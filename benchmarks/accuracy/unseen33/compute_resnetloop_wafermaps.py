"""Semiconductor wafer-map defect pattern classification.

A small ResNet (three stages of residual blocks with batch norm) trained with
a custom tf.GradientTape loop; the wafer maps sit in NumPy arrays in memory
and each step only slices a random index batch.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_WAFERS = 1024
SIZE = 32
BATCH = 32
STEPS = 120
N_CLASSES = 8


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(kv) + "\n")


def synth_wafers(rng):
    yy, xx = np.mgrid[-1:1:SIZE * 1j, -1:1:SIZE * 1j]
    r = np.sqrt(xx ** 2 + yy ** 2)
    ang = np.arctan2(yy, xx)
    y = rng.integers(0, N_CLASSES, N_WAFERS)
    x = (rng.random((N_WAFERS, SIZE, SIZE)) < 0.05).astype(np.float32)
    for i in range(N_WAFERS):
        c = y[i]
        if c == 1:
            x[i] += (r < 0.3)
        elif c == 2:
            x[i] += (r > 0.8)
        elif c == 3:
            x[i] += (np.abs(ang - rng.uniform(-3, 3)) < 0.3)
        elif c == 4:
            x[i] += (np.abs(xx - rng.uniform(-0.5, 0.5)) < 0.05)
        elif c >= 5:
            x[i] += (rng.random((SIZE, SIZE)) < 0.1 * c)
    x = np.clip(x, 0, 1) * (r < 1.0)
    return x[..., None].astype(np.float32), y.astype(np.int32)


def res_block(h, filters, stride):
    shortcut = h
    h = keras.layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(h)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.ReLU()(h)
    h = keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)(h)
    h = keras.layers.BatchNormalization()(h)
    if stride != 1 or shortcut.shape[-1] != filters:
        shortcut = keras.layers.Conv2D(filters, 1, strides=stride, use_bias=False)(shortcut)
        shortcut = keras.layers.BatchNormalization()(shortcut)
    return keras.layers.ReLU()(keras.layers.Add()([h, shortcut]))


def make_model():
    inputs = keras.Input((SIZE, SIZE, 1))
    h = keras.layers.Conv2D(16, 3, padding="same", use_bias=False)(inputs)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.ReLU()(h)
    for filters, stride in ((16, 1), (16, 1), (32, 2), (32, 1), (64, 2), (64, 1)):
        h = res_block(h, filters, stride)
    h = keras.layers.GlobalAveragePooling2D()(h)
    return keras.Model(inputs, keras.layers.Dense(N_CLASSES)(h))


def run_loop(get_batch):
    keras.utils.set_random_seed(9)
    model = make_model()
    opt = keras.optimizers.SGD(0.05, momentum=0.9)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss_value = float("nan")
    t0 = time.perf_counter()
    for step in range(STEPS):
        x, y = get_batch(step)
        loss_value = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss_value, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    x, y = synth_wafers(np.random.default_rng(0))
    rng = np.random.default_rng(1)

    def random_batch(step):
        idx = rng.integers(0, N_WAFERS, BATCH)
        return x[idx], y[idx]

    full, loss_value, wall = run_loop(random_batch)
    report(steps_per_second=1.0 / full)
    msg = f"wafermaps: {1.0 / full:.2f} steps/s, loop {wall:.1f}s, loss {loss_value:.3f}"
    if args.truth:
        fixed = random_batch(0)
        compute, _, _ = run_loop(lambda step: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report(truth_input_fraction=frac)
        msg += f", truth_input_fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
