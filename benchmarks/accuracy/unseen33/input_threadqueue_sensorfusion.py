"""Activity recognition for warehouse workers from wrist IMU packets.

A producer threading.Thread decodes simulated raw sensor packets into
windowed features (Python loops) and fills a queue.Queue; a custom
GradientTape training loop consumes the queue.
"""
import argparse
import json
import math
import os
import queue
import threading
import time

import numpy as np
import tensorflow as tf
import keras

BATCH = 64
WINDOW = 128
CHANNELS = 6
STEPS = 600
N_CLASSES = 8
PACKET_NOISE = 0.05


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(kv) + "\n")


def decode_packets(rng):
    """Decode one batch of raw packets: integer counts -> calibrated, smoothed windows."""
    x = np.empty((BATCH, WINDOW, CHANNELS), dtype=np.float32)
    y = rng.integers(0, N_CLASSES, BATCH)
    for b in range(BATCH):
        freq = 0.5 + 0.4 * int(y[b])
        raw = rng.integers(-2048, 2048, (WINDOW, CHANNELS)).tolist()
        prev = [0.0] * CHANNELS
        for t in range(WINDOW):
            row = raw[t]
            phase = math.sin(freq * t * 0.1)
            out = []
            for c in range(CHANNELS):
                v = row[c] / 2048.0 * PACKET_NOISE + phase * (1.0 + 0.1 * c)
                v = 0.8 * prev[c] + 0.2 * v  # low-pass, as the firmware does
                prev[c] = v
                out.append(v)
            x[b, t] = out
    return x, y.astype(np.int32)


def producer(q, n_batches, seed, stop):
    rng = np.random.default_rng(seed)
    for _ in range(n_batches):
        if stop.is_set():
            return
        q.put(decode_packets(rng))
    q.put(None)


def make_model():
    inputs = keras.Input((WINDOW, CHANNELS))
    h = keras.layers.Conv1D(56, 5, padding="same", activation="relu")(inputs)
    h = keras.layers.Conv1D(56, 5, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling1D(2)(h)
    h = keras.layers.Conv1D(80, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    return keras.Model(inputs, keras.layers.Dense(N_CLASSES)(h))


def run_loop(next_batch):
    keras.utils.set_random_seed(3)
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

    stamps = []
    loss_value = float("nan")
    t0 = time.perf_counter()
    for _ in range(STEPS):
        item = next_batch()
        if item is None:
            break
        x, y = item
        loss_value = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss_value, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    q = queue.Queue(maxsize=8)
    stop = threading.Event()
    worker = threading.Thread(target=producer, args=(q, STEPS, 11, stop), daemon=True)
    worker.start()
    try:
        full, loss_value, wall = run_loop(q.get)
    finally:
        stop.set()
    report(steps_per_second=1.0 / full)
    msg = f"sensorfusion: {1.0 / full:.2f} steps/s, loop {wall:.1f}s, loss {loss_value:.3f}"
    if args.truth:
        fixed = decode_packets(np.random.default_rng(99))
        compute, _, _ = run_loop(lambda: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report(truth_input_fraction=frac)
        msg += f", truth_input_fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
