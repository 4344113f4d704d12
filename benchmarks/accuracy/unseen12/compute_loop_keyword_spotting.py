"""Keyword spotting on log-mel spectrograms with a compact VGG-style CNN.

Spectrograms are synthesized once into memory; the tf.data pipeline is cached,
shuffled, batched and prefetched, and the model is trained with a hand-written
tf.GradientTape loop that keeps a loss history and prints progress.

    python compute_loop_keyword_spotting.py [--truth]
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

FRAMES = 98
MELS = 64
KEYWORDS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go", "_unknown"]
N_CLIPS = 2000
BATCH_SIZE = 32
STEPS = 100
LOG_EVERY = 25


def synth_spectrograms(n, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(KEYWORDS), size=n)
    t = np.arange(FRAMES)[:, None]
    m = np.arange(MELS)[None, :]
    specs = rng.normal(-4.0, 0.5, size=(n, FRAMES, MELS)).astype(np.float32)
    for i, k in enumerate(labels):
        onset = rng.integers(5, 40)
        # each keyword: formant tracks with a keyword-specific slope
        for f in range(3):
            centre = 8 + 15 * f + (k % 5) * 2 + (k // 5) * (t - onset) * 0.15 * (f + 1)
            mask = (t >= onset) & (t < onset + 35 + k)
            specs[i] += 3.0 * mask * np.exp(-((m - centre) ** 2) / 8.0)
    return specs[..., None], labels.astype(np.int32)


def build_model():
    inp = keras.Input((FRAMES, MELS, 1))
    x = keras.layers.Normalization(mean=-3.5, variance=1.5)(inp)
    for filters in (24, 48, 96, 128):
        x = keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.ReLU()(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(len(KEYWORDS))(x)
    return keras.Model(inp, out, name="kws_cnn")


def train(dataset, tag):
    keras.utils.set_random_seed(1)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_obj = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    acc = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_obj(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        acc.update_state(y, logits)
        return loss

    loss_history = []
    step_times = []
    for i, (x, y) in enumerate(dataset.take(STEPS)):
        loss = step(x, y)
        loss_history.append(float(loss))
        step_times.append(time.perf_counter())
        if (i + 1) % LOG_EVERY == 0:
            print(f"  [{tag}] step {i + 1}/{STEPS} loss {np.mean(loss_history[-LOG_EVERY:]):.4f}")
    sec = (step_times[-1] - step_times[4]) / (len(step_times) - 5)
    return sec, loss_history[-1], float(acc.result())


def append_json(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(obj) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    specs, labels = synth_spectrograms(N_CLIPS)
    ds = (
        tf.data.Dataset.from_tensor_slices((specs, labels))
        .cache()
        .shuffle(N_CLIPS)
        .batch(BATCH_SIZE, drop_remainder=True)
        .repeat()
        .prefetch(tf.data.AUTOTUNE)
    )
    full, loss, acc = train(ds, "train")
    append_json({"steps_per_second": 1.0 / full})
    line = f"kws: {STEPS} steps, {1 / full:.2f} steps/s, loss {loss:.3f}, acc {acc:.3f}"
    if args.truth:
        batch = next(iter(ds))
        compute, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), "cached")
        frac = min(1.0, max(0.0, (full - compute) / full))
        append_json({"truth_input_fraction": frac})
        line += f", truth_input_fraction {frac:.3f}"
    print(line)


if __name__ == "__main__":
    main()
