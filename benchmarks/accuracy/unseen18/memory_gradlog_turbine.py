"""Vibration autoencoder for wind-turbine gearboxes, with gradient statistics kept for analysis."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_WINDOWS = 20000
WINDOW = 512
BATCH_SIZE = 512
STEPS = 170


def make_vibration(rng):
    t = np.arange(WINDOW) / 2048.0
    shaft = rng.uniform(20, 30, size=(N_WINDOWS, 1))
    x = np.sin(2 * np.pi * shaft * t) + 0.3 * np.sin(2 * np.pi * 3.1 * shaft * t)
    x += 0.1 * rng.standard_normal((N_WINDOWS, WINDOW))
    return x.astype(np.float32)


def build_model():
    return keras.Sequential(
        [
            keras.Input(shape=(WINDOW,)),
            keras.layers.Dense(1024, activation="relu"),
            keras.layers.Dense(512, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(512, activation="relu"),
            keras.layers.Dense(1024, activation="relu"),
            keras.layers.Dense(WINDOW),
        ]
    )


def train(get_batch):
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)

    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, grads

    grad_history = []
    times = []
    for step in range(STEPS):
        x = get_batch(step)
        loss, grads = train_step(x)
        grad_history.append([g.numpy() for g in grads])
        loss = float(loss)
        times.append(time.perf_counter())
        if step % 30 == 0:
            norms = [np.linalg.norm(g) for g in grad_history[-1]]
            print(
                f"step {step:3d} loss {loss:.5f} grad-norm {np.sqrt(np.sum(np.square(norms))):.4f}"
            )
    mean_grad = [np.mean([h[i] for h in grad_history[-20:]], axis=0) for i in range(len(grads))]
    print(f"mean |grad| over last 20 steps: {np.mean([np.abs(g).mean() for g in mean_grad]):.2e}")
    return float(np.mean(np.diff(times[4:])))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(13)
    windows = make_vibration(rng)
    mu, sd = windows.mean(), windows.std()
    windows = (windows - mu) / sd

    def real_batch(step):
        idx = rng.integers(0, N_WINDOWS, BATCH_SIZE)
        return tf.constant(windows[idx])

    sec = train(real_batch)
    print(f"real input: {sec * 1000:.1f} ms/step")
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": 1.0 / sec}) + "\n")
    if args.truth:
        fixed = real_batch(0)
        csec = train(lambda step: fixed)
        frac = min(1.0, max(0.0, (sec - csec) / sec))
        print(f"cached batch: {csec * 1000:.1f} ms/step, input fraction {frac:.3f}")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")


if __name__ == "__main__":
    main()
