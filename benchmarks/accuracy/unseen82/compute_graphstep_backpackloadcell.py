import time; T0 = time.perf_counter()
"""Backpack load-cell streams -> carried load and gait imbalance (regression).

Eight load cells in a pack's hip belt and shoulder straps sample at 100 Hz.
Windows of 512 samples are generated once and turned into a list of
batch tensors before training; a custom @tf.function GradientTape step
trains a dilated Conv1D network over them.
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 32
STEPS = 30
EPOCHS = 3
WINDOW = 512
CELLS = 8


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def make_batches(seed=82):
    rng = np.random.default_rng(seed)
    t = np.arange(WINDOW, dtype=np.float32) / 100.0
    batches = []
    for _ in range(STEPS):
        load = rng.uniform(5, 30, (BATCH, 1)).astype(np.float32)
        cadence = rng.uniform(1.4, 2.2, (BATCH, 1)).astype(np.float32)
        imbalance = rng.normal(0, 0.2, (BATCH, 1)).astype(np.float32)
        phase = np.sin(2 * np.pi * cadence * t)[:, :, None]
        gains = np.linspace(0.5, 1.5, CELLS, dtype=np.float32)[None, None, :]
        x = load[:, :, None] * gains * (1 + 0.3 * phase + imbalance[:, :, None] * phase ** 2)
        x = x + rng.normal(0, 0.5, x.shape).astype(np.float32)
        y = np.concatenate([load / 30.0, imbalance], axis=1)
        batches.append((tf.constant(x / 30.0), tf.constant(y)))
    return batches


def build_model():
    keras.utils.set_random_seed(82)
    inp = keras.Input((WINDOW, CELLS))
    x = keras.layers.Conv1D(128, 7, padding="same", activation="relu")(inp)
    for d in (1, 2, 4, 8):
        h = keras.layers.Conv1D(128, 5, padding="same", dilation_rate=d, activation="relu")(x)
        x = keras.layers.Add()([x, h])
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(2)(x))


def train(batch_for_step):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.MeanSquaredError()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for step in range(STEPS):
            x, y = batch_for_step(step)
            loss = float(train_step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    g = gaps[5:]
    return sum(g) / len(g), len(gaps), loss


def main():
    batches = make_batches()
    full, n, loss = train(lambda s: batches[s])
    emit({"steps_per_second": 1.0 / full})
    msg = f"backpackloadcell: {full * 1000:.1f} ms/step over {n} gaps, loss {loss:.4f}"
    if TRUTH:
        fixed = batches[0]
        compute, _, _ = train(lambda s: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", one-batch {compute * 1000:.1f} ms/step, truth_input_fraction={frac:.3f}"
    print(msg + f", wall {time.perf_counter() - T0:.1f} s")


if __name__ == "__main__":
    main()
