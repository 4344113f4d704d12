"""Store-item demand forecasting with frequent fault-tolerance checkpoints.

A wide-and-deep model with large store x item embedding tables is trained in
a custom loop on in-memory data.  Because the job runs on pre-emptible
machines, a tf.train.CheckpointManager saves the model and the Adam slots
after every step, which dominates the wall time.
"""
import time

T_START = time.perf_counter()

import argparse
import json
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf
import keras

N_STORE_ITEMS = 250000
N_ITEMS = 40000
EMB = 64
N_NUM = 24
BATCH = 256
STEPS = 100
SAVE_EVERY = 1
N_ROWS = 65536


def make_data(rng):
    si = rng.integers(0, N_STORE_ITEMS, size=N_ROWS).astype(np.int32)
    it = rng.integers(0, N_ITEMS, size=N_ROWS).astype(np.int32)
    num = rng.normal(size=(N_ROWS, N_NUM)).astype(np.float32)
    y = (np.log1p((si % 97) + (it % 13)) + num[:, 0] * 0.3).astype(np.float32)[:, None]
    return si, it, num, y


def build_model():
    si = keras.Input((), dtype="int32", name="store_item")
    it = keras.Input((), dtype="int32", name="item")
    num = keras.Input((N_NUM,), name="numeric")
    e1 = keras.layers.Embedding(N_STORE_ITEMS, EMB)(si)
    e2 = keras.layers.Embedding(N_ITEMS, EMB)(it)
    x = keras.layers.Concatenate()([e1, e2, num])
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model([si, it, num], out)


def train(batches, ckpt_dir):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def train_step(si, it, num, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model([si, it, num], training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    manager = tf.train.CheckpointManager(ckpt, ckpt_dir, max_to_keep=3)
    step_times, save_s = [], 0.0
    loss = float("nan")
    t_prev = time.perf_counter()
    for step, (si, it, num, y) in enumerate(batches):
        if step >= STEPS:
            break
        loss = float(train_step(si, it, num, y))
        t = time.perf_counter()
        step_times.append(t - t_prev)
        if (step + 1) % SAVE_EVERY == 0:
            manager.save(checkpoint_number=step + 1)
            save_s += time.perf_counter() - t
        t_prev = time.perf_counter()
    return float(np.mean(step_times[5:])), loss, save_s


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tf.random.set_seed(0)
    data = make_data(np.random.default_rng(0))
    tmp = tempfile.mkdtemp(prefix="u30_demandforecast_")
    try:
        def dataset():
            return (tf.data.Dataset.from_tensor_slices(data).shuffle(N_ROWS, seed=0)
                    .repeat().batch(BATCH).prefetch(tf.data.AUTOTUNE))

        t = time.perf_counter()
        full, loss, save_s = train(dataset(), os.path.join(tmp, "run"))
        loop_s = time.perf_counter() - t
        emit({"steps_per_second": 1.0 / full})
        msg = (f"demandforecast: {STEPS} steps, {full * 1000:.1f} ms/step, loss {loss:.3f}, "
               f"saves {save_s:.1f}s of loop {loop_s:.1f}s, "
               f"save share of process wall {100 * save_s / (time.perf_counter() - T_START):.0f}%")
        if args.truth:
            batch = next(iter(dataset()))
            t = time.perf_counter()
            compute, _, save2 = train(tf.data.Dataset.from_tensors(batch).repeat(),
                                      os.path.join(tmp, "truth"))
            loop2 = time.perf_counter() - t
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += (f", compute-only {compute * 1000:.1f} ms/step (saves {save2:.1f}s of {loop2:.1f}s),"
                    f" truth {frac:.3f}")
        print(msg + f", wall {time.perf_counter() - t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
