import time; T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / max(len(tail), 1)


def input_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


# Yo-yo spin sensors: a 6-axis IMU inside the yo-yo body logs 2 s of spin at
# 128 Hz per throw; a residual 1-D conv net predicts the trick performed
# (sleeper, walk-the-dog, around-the-world, ...).  All throws are built once
# as tensors; a custom @tf.function GradientTape step loops over the
# pre-built batches.
SAMPLES = 256
AXES = 6
N_TRICKS = 10
BATCH = 96
N_BATCHES = 24
STEPS = 40
EPOCHS = 3


def make_throws(seed):
    rng = np.random.default_rng(seed)
    t = np.arange(SAMPLES, dtype=np.float32) / 128.0
    xs, ys = [], []
    for _ in range(N_BATCHES):
        trick = rng.integers(0, N_TRICKS, BATCH)
        rpm = rng.uniform(2000, 5000, (BATCH, 1)) / 60.0
        decay = np.exp(-t[None, :] * (0.1 + 0.05 * trick[:, None]))
        gyro = np.sin(2 * np.pi * rpm * t[None, :]) * decay
        chans = [gyro * (1 + 0.1 * k) + rng.normal(0, 0.2, (BATCH, SAMPLES)) for k in range(AXES)]
        xs.append(tf.constant(np.stack(chans, axis=-1).astype(np.float32)))
        ys.append(tf.constant(trick.astype(np.int32)))
    return xs, ys


def res_block(x, filters):
    h = keras.layers.Conv1D(filters, 7, padding="same", activation="relu")(x)
    h = keras.layers.Conv1D(filters, 7, padding="same")(h)
    if x.shape[-1] != filters:
        x = keras.layers.Conv1D(filters, 1)(x)
    return keras.layers.Activation("relu")(keras.layers.Add()([x, h]))


def make_model():
    inp = keras.Input((SAMPLES, AXES))
    x = res_block(inp, 64)
    x = res_block(x, 64)
    x = keras.layers.MaxPooling1D(2)(x)
    x = res_block(x, 96)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(N_TRICKS)(x)
    return keras.Model(inp, out)


def run(get_batch):
    keras.utils.set_random_seed(61)
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

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
            x, y = get_batch(step)
            loss = float(train_step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return mean_after_warmup(gaps), loss


def main():
    xs, ys = make_throws(67)
    full, loss = run(lambda i: (xs[i % N_BATCHES], ys[i % N_BATCHES]))
    emit({"steps_per_second": 1.0 / full})
    print(f"yoyospin: {full * 1000:.1f} ms/step, loss {loss:.4f}, wall {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        one = (xs[0], ys[0])
        compute, _ = run(lambda i: one)
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"yoyospin truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
