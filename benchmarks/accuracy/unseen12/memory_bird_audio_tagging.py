"""Multi-label bird-species tagging on log-mel spectrogram crops, custom training loop.

The loop keeps every batch's inputs, targets and logits in a Python list "so we can
compute the epoch's mAP and inspect hard examples later"; nothing is ever dropped, so
the process memory grows by one batch of spectrograms per step.

    python memory_bird_audio_tagging.py [--truth]
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_SPECIES = 24
MELS = 128
CLIP_FRAMES = 1024
CROP = 256
N_CLIPS = 96
BATCH_SIZE = 32
STEPS = 300


def synth_recordings(seed=0):
    rng = np.random.default_rng(seed)
    specs = rng.normal(-6, 1, size=(N_CLIPS, MELS, CLIP_FRAMES)).astype(np.float32)
    tags = np.zeros((N_CLIPS, N_SPECIES), dtype=np.float32)
    for i in range(N_CLIPS):
        for sp in rng.choice(N_SPECIES, size=int(rng.integers(1, 4)), replace=False):
            tags[i, sp] = 1
            band = 20 + 4 * sp
            for start in rng.integers(0, CLIP_FRAMES - 30, size=8):  # repeated calls
                specs[i, band : band + 6, start : start + 12 + sp] += 4.0
    return specs[..., None], tags


def make_dataset(specs, tags):
    def random_crop(spec, tag):
        start = tf.random.uniform([], 0, CLIP_FRAMES - CROP, dtype=tf.int32)
        crop = spec[:, start : start + CROP]
        crop += tf.random.normal(tf.shape(crop), stddev=0.3)
        return crop, tag

    ds = tf.data.Dataset.from_tensor_slices((specs, tags)).repeat().shuffle(N_CLIPS)
    return ds.map(random_crop).batch(BATCH_SIZE).prefetch(1)


def build_model():
    inp = keras.Input((MELS, CROP, 1))
    x = keras.layers.Conv2D(16, 5, strides=(2, 2), padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling2D()(x)
    out = keras.layers.Dense(N_SPECIES)(x)
    return keras.Model(inp, out, name="bird_tagger")


def mean_average_precision(y_true, scores):
    aps = []
    for k in range(y_true.shape[1]):
        order = np.argsort(-scores[:, k])
        hits = y_true[order, k]
        if hits.sum() == 0:
            continue
        precision = np.cumsum(hits) / (np.arange(len(hits)) + 1)
        aps.append(float((precision * hits).sum() / hits.sum()))
    return float(np.mean(aps))


def train(batches):
    keras.utils.set_random_seed(2)
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    bce = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = bce(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, logits

    seen = []  # (inputs, targets, logits) of every batch, for analysis at the end
    losses = []
    stamps = []
    for step, (x, y) in enumerate(batches):
        if step == STEPS:
            break
        loss, logits = train_step(x, y)
        seen.append((x, y, logits))
        losses.append(loss.numpy())
        stamps.append(time.perf_counter())
        if (step + 1) % 100 == 0:
            print(f"  step {step + 1}: loss {np.mean(losses[-100:]):.4f}, kept {len(seen)} batches")
    y_all = np.concatenate([s[1].numpy() for s in seen[-50:]])
    logit_all = np.concatenate([s[2].numpy() for s in seen[-50:]])
    sec = (stamps[-1] - stamps[4]) / (len(stamps) - 5)
    return sec, float(losses[-1]), mean_average_precision(y_all, logit_all)


def append_out(obj):
    target = os.environ.get("ACCURACY_OUT")
    if target:
        with open(target, "a") as fh:
            fh.write(json.dumps(obj) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    specs, tags = synth_recordings()
    ds = make_dataset(specs, tags)
    full, loss, mean_ap = train(ds)
    append_out({"steps_per_second": 1.0 / full})
    text = (
        f"birds: {STEPS} steps, {1 / full:.2f} steps/s, loss {loss:.4f}, recent mAP {mean_ap:.3f}"
    )
    if args.truth:
        one = next(iter(ds))
        compute, _, _ = train(tf.data.Dataset.from_tensors(one).repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        append_out({"truth_input_fraction": frac})
        text += f", truth_input_fraction {frac:.3f}"
    print(text)


if __name__ == "__main__":
    main()
