"""Autoencoder for bearing-vibration anomaly detection; reconstructions kept for threshold tuning."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=320)
parser.add_argument("--batch-size", type=int, default=1024)
args = parser.parse_args()

N_BINS = 512
N_WINDOWS = 32768

rng = np.random.default_rng(8)
freqs = np.linspace(0, 1, N_BINS, dtype=np.float32)
base = np.exp(-((freqs[None, :] - rng.uniform(0.1, 0.4, size=(N_WINDOWS, 1))) ** 2) / 0.01)
spectra = (base + rng.normal(0, 0.05, size=(N_WINDOWS, N_BINS))).astype(np.float32)

dataset = (
    tf.data.Dataset.from_tensor_slices(spectra)
    .shuffle(N_WINDOWS, seed=0)
    .repeat()
    .batch(args.batch_size, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)


def build_model():
    inp = keras.Input(shape=(N_BINS,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(128, activation="relu")(x)
    z = keras.layers.Dense(32, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(z)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(N_BINS)(x)
    return keras.Model(inp, out)


def train(ds):
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)

    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            recon = model(x, training=True)
            loss = tf.reduce_mean(tf.square(x - recon))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, recon

    recon_log = []
    stamps = []
    it = iter(ds)
    for step in range(args.steps):
        x = next(it)
        loss, recon = train_step(x)
        loss = float(loss)
        stamps.append(time.perf_counter())
        # keep inputs and reconstructions to pick the anomaly threshold after training
        recon_log.append({"step": step, "x": x.numpy(), "recon": recon.numpy(), "loss": loss})
        if step % 50 == 0:
            print(f"step {step:4d}  mse {loss:.5f}")
    errors = np.concatenate([np.mean((r["x"] - r["recon"]) ** 2, axis=1) for r in recon_log[-20:]])
    print(f"99th percentile reconstruction error: {np.percentile(errors, 99):.5f}")
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
