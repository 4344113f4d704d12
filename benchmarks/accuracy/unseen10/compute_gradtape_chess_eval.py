"""Chess position evaluation with a residual ConvNet and a custom training loop.

Board positions are encoded AlphaZero-style as 8x8x18 planes (12 piece planes, side
to move, castling rights, en-passant file). Random but legal-looking positions and a
material+mobility based target score are generated once with numpy and stored as
tensors. A ``@tf.function`` train step with ``tf.GradientTape`` trains a 4-block
residual tower (64 filters) to regress the score; batches are sliced from the
in-memory tensors with ``tf.gather``, so the step is pure math.

Run ``python compute_gradtape_chess_eval.py [--truth]``.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

N_POSITIONS = 10_000
BATCH = 128
STEPS = 90
PIECE_VALUES = np.array([1, 3, 3, 5, 9, 0, -1, -3, -3, -5, -9, 0], np.float32)


def random_positions(n, seed=0):
    rng = np.random.default_rng(seed)
    planes = np.zeros((n, 8, 8, 18), np.float32)
    counts = np.array([8, 2, 2, 2, 1, 1] * 2)
    for i in range(n):
        squares = rng.permutation(64)
        k = 0
        for piece, count in enumerate(counts):
            keep = rng.binomial(count, 0.7) if piece % 6 != 5 else 1
            for sq in squares[k : k + keep]:
                planes[i, sq // 8, sq % 8, piece] = 1
            k += keep
        planes[i, :, :, 12] = rng.integers(0, 2)
        planes[i, :, :, 13:17] = rng.integers(0, 2, size=4)
    material = planes[..., :12].sum(axis=(1, 2)) @ PIECE_VALUES
    mobility = planes[..., :6].sum(axis=(1, 2, 3)) - planes[..., 6:12].sum(axis=(1, 2, 3))
    score = np.tanh((material + 0.1 * mobility) / 10).astype(np.float32)
    return planes, score[:, None]


def residual_tower(blocks=4, filters=64):
    inputs = keras.Input((8, 8, 18))
    x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(inputs)
    for _ in range(blocks):
        y = keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
        y = keras.layers.BatchNormalization()(y)
        y = keras.layers.ReLU()(y)
        y = keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)(y)
        y = keras.layers.BatchNormalization()(y)
        x = keras.layers.ReLU()(keras.layers.Add()([x, y]))
    x = keras.layers.Conv2D(4, 1, activation="relu")(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    outputs = keras.layers.Dense(1, activation="tanh")(x)
    return keras.Model(inputs, outputs)


def train(batch_fn, steps):
    model = residual_tower()
    opt = keras.optimizers.AdamW(learning_rate=1e-3, weight_decay=1e-4)
    mse = keras.losses.MeanSquaredError()

    @tf.function
    def step_fn(boards, target):
        with tf.GradientTape() as tape:
            pred = model(boards, training=True)
            loss = mse(target, pred)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    durations = []
    for step in range(steps):
        t0 = time.perf_counter()
        boards, target = batch_fn(step)
        loss = step_fn(boards, target).numpy()
        durations.append(time.perf_counter() - t0)
        if step % 30 == 0:
            print(f"step {step:3d} mse {loss:.4f}")
    return float(np.mean(durations[5:]))


def append_json(line):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(line) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    planes, scores = random_positions(N_POSITIONS)
    planes, scores = tf.constant(planes), tf.constant(scores)
    order = tf.random.shuffle(tf.range(N_POSITIONS), seed=0)

    def in_memory_batch(step):
        start = (step * BATCH) % (N_POSITIONS - BATCH)
        idx = order[start : start + BATCH]
        return tf.gather(planes, idx), tf.gather(scores, idx)

    full = train(in_memory_batch, STEPS)
    append_json({"steps_per_second": 1.0 / full})
    msg = f"chess eval net: {1.0 / full:.2f} steps/s"
    if args.truth:
        fixed = in_memory_batch(0)
        compute = train(lambda step: fixed, STEPS)
        frac = min(1.0, max(0.0, (full - compute) / full))
        append_json({"truth_input_fraction": frac})
        msg += f"; full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms, fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
