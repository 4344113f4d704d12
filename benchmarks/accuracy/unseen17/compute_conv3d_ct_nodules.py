"""Lung nodule malignancy from small CT sub-volumes with a 3D CNN (custom training loop)."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=40)
parser.add_argument("--batch-size", type=int, default=16)
args = parser.parse_args()

VOL = 32
N_VOLUMES = 256

rng = np.random.default_rng(4)
volumes = rng.normal(-600, 150, size=(N_VOLUMES, VOL, VOL, VOL, 1)).astype(np.float32)
labels = rng.integers(0, 2, size=N_VOLUMES).astype(np.float32)
zz, yy, xx = np.mgrid[:VOL, :VOL, :VOL]
for i in range(N_VOLUMES):
    r = 4 + 4 * labels[i] + rng.uniform(0, 2)
    c = rng.uniform(10, 22, size=3)
    blob = ((zz - c[0]) ** 2 + (yy - c[1]) ** 2 + (xx - c[2]) ** 2) < r**2
    volumes[i, blob, 0] = 40.0
volumes = np.clip((volumes + 1000.0) / 1400.0, 0.0, 1.0)

dataset = (
    tf.data.Dataset.from_tensor_slices((volumes, labels))
    .shuffle(N_VOLUMES, seed=0)
    .repeat()
    .batch(args.batch_size, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)


def build_model():
    inp = keras.Input(shape=(VOL, VOL, VOL, 1))
    x = keras.layers.Conv3D(16, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling3D(2)(x)
    x = keras.layers.Conv3D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv3D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling3D(2)(x)
    x = keras.layers.Conv3D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling3D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model(inp, out)


def train(ds):
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-4)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y[:, None], logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    it = iter(ds)
    for step in range(args.steps):
        x, y = next(it)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
        if step % 10 == 0:
            print(f"step {step:3d}  loss {loss:.4f}")
    return float(np.mean(np.diff(stamps)[4:]))


def write_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    full = train(dataset)
    write_result({"steps_per_second": 1.0 / full})
    msg = f"train: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
    if args.truth:
        batch = next(iter(dataset))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        compute = train(cached)
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_result({"truth_input_fraction": frac})
        msg += f" | cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(msg)


if __name__ == "__main__":
    main()
