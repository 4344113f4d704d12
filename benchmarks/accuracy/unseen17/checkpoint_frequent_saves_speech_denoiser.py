"""Spectral speech denoiser (wide MLP on stacked STFT frames), checkpointing as it trains."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=40)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--save-every", type=int, default=1, help="batches between checkpoints")
args = parser.parse_args()

N_BINS = 257
CONTEXT = 4
IN_DIM = N_BINS * CONTEXT
HIDDEN = 3072
N_FRAMES = 20000

rng = np.random.default_rng(2)
clean = np.abs(rng.normal(size=(N_FRAMES, N_BINS))).astype(np.float32)
noise = np.abs(rng.normal(0, 0.5, size=(N_FRAMES, N_BINS))).astype(np.float32)
noisy = np.log1p(clean + noise)
idx = np.arange(N_FRAMES - CONTEXT)[:, None] + np.arange(CONTEXT)[None, :]
x_all = noisy[idx].reshape(-1, IN_DIM)
y_all = np.log1p(clean[CONTEXT - 1 : N_FRAMES - 1])

train_ds = (
    tf.data.Dataset.from_tensor_slices((x_all, y_all))
    .shuffle(8192, seed=0)
    .repeat()
    .batch(args.batch_size, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)


def build_model():
    inp = keras.Input(shape=(IN_DIM,))
    x = keras.layers.Dense(HIDDEN, activation="relu")(inp)
    x = keras.layers.Dense(HIDDEN, activation="relu")(x)
    x = keras.layers.Dense(HIDDEN, activation="relu")(x)
    mask = keras.layers.Dense(N_BINS, activation="sigmoid")(x)
    last = keras.layers.Lambda(lambda t: t[:, -N_BINS:])(inp)
    out = keras.layers.Multiply()([mask, last])
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-4), loss="mse")
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append(time.perf_counter())


def seconds_per_step(stamps, skip=5):
    return float(np.mean(np.diff(stamps)[skip - 1 :]))


def write_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def train(ds, ckpt_dir):
    model = build_model()
    clock = StepClock()
    callbacks = [clock]
    if args.save_every > 0:
        callbacks.insert(
            0,
            keras.callbacks.ModelCheckpoint(
                os.path.join(ckpt_dir, "denoiser_latest.weights.h5"),
                save_weights_only=True,
                save_freq=args.save_every,
            ),
        )
    t0 = time.perf_counter()
    model.fit(ds, steps_per_epoch=args.steps, epochs=1, callbacks=callbacks, verbose=0)
    print(
        f"fit took {time.perf_counter() - t0:.1f}s "
        f"({model.count_params() / 1e6:.1f}M params, save every {args.save_every} batches)"
    )
    return seconds_per_step(clock.stamps)


def main():
    ckpt_dir = tempfile.mkdtemp(prefix="u17_denoiser_")
    try:
        full = train(train_ds, ckpt_dir)
        write_result({"steps_per_second": 1.0 / full})
        msg = f"train: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
        if args.truth:
            batch = next(iter(train_ds))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            compute = train(cached, ckpt_dir)
            frac = min(1.0, max(0.0, (full - compute) / full))
            write_result({"truth_input_fraction": frac})
            msg += f" | cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(msg)
    finally:
        shutil.rmtree(ckpt_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
