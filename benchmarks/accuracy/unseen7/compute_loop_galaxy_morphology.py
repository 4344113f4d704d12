"""Galaxy morphology (elliptical / spiral / irregular / merger) CNN.

Images are rendered once into a numpy array, wrapped in a cached, shuffled,
prefetched tf.data pipeline, and trained with a custom GradientTape loop.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

IMG_SIZE = 32
CLASSES = ["elliptical", "spiral", "irregular", "merger"]
N_IMAGES = 4096
BATCH = 64
STEPS = 110
WARMUP = 5


def render_galaxies(n, seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[-1 : 1 : IMG_SIZE * 1j, -1 : 1 : IMG_SIZE * 1j]
    r = np.sqrt(xx**2 + yy**2)
    theta = np.arctan2(yy, xx)
    imgs = np.zeros((n, IMG_SIZE, IMG_SIZE, 3), np.float32)
    labels = rng.integers(0, len(CLASSES), n)
    for i, c in enumerate(labels):
        if c == 0:
            g = np.exp(-((r / rng.uniform(0.2, 0.5)) ** 2))
        elif c == 1:
            arms = 0.5 + 0.5 * np.cos(2 * theta - 6 * r + rng.uniform(0, 6.28))
            g = np.exp(-r / 0.35) * (0.4 + arms)
        elif c == 2:
            g = np.exp(-r / 0.4) * rng.uniform(0.3, 1.0, size=r.shape)
        else:
            off = rng.uniform(0.2, 0.45)
            g = np.exp(-((xx - off) ** 2 + yy**2) / 0.05) + np.exp(
                -((xx + off) ** 2 + yy**2) / 0.05
            )
        color = rng.uniform(0.6, 1.0, size=3)
        imgs[i] = g[..., None] * color + rng.normal(0, 0.03, size=(IMG_SIZE, IMG_SIZE, 3))
    return imgs, labels.astype(np.int32)


def residual_block(x, filters, stride):
    shortcut = x
    x = keras.layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.ReLU()(x)
    x = keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
    x = keras.layers.BatchNormalization()(x)
    if stride != 1 or shortcut.shape[-1] != filters:
        shortcut = keras.layers.Conv2D(filters, 1, strides=stride, use_bias=False)(shortcut)
    return keras.layers.ReLU()(x + shortcut)


def small_resnet():
    inp = keras.Input((IMG_SIZE, IMG_SIZE, 3))
    x = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(inp)
    x = residual_block(x, 24, 1)
    x = residual_block(x, 48, 2)
    x = residual_block(x, 64, 2)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inp, keras.layers.Dense(len(CLASSES))(x), name="galaxy_resnet")


def put(key, value):
    dest = os.environ.get("ACCURACY_OUT")
    if dest:
        with open(dest, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()

    images, labels = render_galaxies(N_IMAGES)
    ds = (
        tf.data.Dataset.from_tensor_slices((images, labels))
        .cache()
        .shuffle(N_IMAGES, seed=0)
        .batch(BATCH, drop_remainder=True)
        .repeat()
        .prefetch(tf.data.AUTOTUNE)
    )

    model = small_resnet()
    opt = keras.optimizers.SGD(learning_rate=0.05, momentum=0.9)
    xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    acc = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = xent(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        acc.update_state(y, logits)
        return loss

    def run(dataset, n):
        times = []
        last = time.perf_counter()
        for step, (x, y) in enumerate(dataset.take(n)):
            loss = train_step(x, y)
            if step % 40 == 0:
                print(f"  step {step:4d} loss={loss.numpy():.4f} acc={acc.result().numpy():.3f}")
            now = time.perf_counter()
            times.append(now - last)
            last = now
        return times

    print(f"training {model.name} ({model.count_params():,} params) for {args.steps} steps")
    t0 = time.perf_counter()
    run(ds, args.steps)
    wall = time.perf_counter() - t0
    print(f"done: {args.steps / wall:.2f} steps/s")
    put("steps_per_second", args.steps / wall)

    if args.truth:
        full = run(ds, args.steps)
        comp = run(ds.take(1).cache().repeat(), args.steps)
        f_m, c_m = np.mean(full[WARMUP:]), np.mean(comp[WARMUP:])
        frac = float(np.clip((f_m - c_m) / f_m, 0.0, 1.0))
        print(
            f"truth: full {f_m * 1e3:.1f} ms/step, compute {c_m * 1e3:.1f} ms/step, input {frac:.3f}"
        )
        put("truth_input_fraction", frac)


if __name__ == "__main__":
    main()
