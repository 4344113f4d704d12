"""Search query/document relevance ranker with dense feature towers.

A callback writes a full .keras snapshot every few batches so that a crashed
job can be resumed close to where it stopped.
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_FEATURES = 1024
N_SAMPLES = 1200
BATCH_SIZE = 16
EPOCHS = 1
SAVE_EVERY = 2
LR = 1e-4


def make_pairs(seed=0):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(N_SAMPLES, N_FEATURES)).astype(np.float32)
    d = (0.5 * q + rng.normal(size=(N_SAMPLES, N_FEATURES))).astype(np.float32)
    y = (np.sum(q[:, :32] * d[:, :32], axis=1) > 8).astype(np.float32)
    return np.concatenate([q, d], axis=1), y


def build_model():
    inp = keras.Input((2 * N_FEATURES,))
    x = keras.layers.Dense(3072, activation="relu")(inp)
    x = keras.layers.Dense(3072, activation="relu")(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(LR), loss="binary_crossentropy", metrics=["accuracy"]
    )
    return model


class PeriodicSnapshot(keras.callbacks.Callback):
    def __init__(self, path, every):
        super().__init__()
        self.path = path
        self.every = every
        self.save_seconds = 0.0
        self.saves = 0

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % self.every == 0:
            t0 = time.perf_counter()
            self.model.save(self.path)
            self.save_seconds += time.perf_counter() - t0
            self.saves += 1


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        durations = []
        for times in self.epochs:
            durations.extend(np.diff(times).tolist())
        return float(np.mean(durations[skip:]))


def train(data, ckpt_dir, label, **fit_kwargs):
    model = build_model()
    snapshot = PeriodicSnapshot(os.path.join(ckpt_dir, f"ranker_{label}.keras"), SAVE_EVERY)
    timer = StepTimer()
    t0 = time.perf_counter()
    model.fit(data, epochs=EPOCHS, callbacks=[snapshot, timer], verbose=2, **fit_kwargs)
    total = time.perf_counter() - t0
    after_first = timer.epochs[0][-1] - timer.epochs[0][0]
    print(
        f"[{label}] params={model.count_params():,} fit {total:.1f}s, {snapshot.saves} saves "
        f"took {snapshot.save_seconds:.1f}s ({snapshot.save_seconds / after_first:.0%} of "
        f"training after the first step)"
    )
    return timer.seconds_per_step()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    ckpt_dir = tempfile.mkdtemp(prefix="u23_checkpoint_ranker_")
    try:
        x, y = make_pairs()
        train_ds = (
            tf.data.Dataset.from_tensor_slices((x, y))
            .shuffle(N_SAMPLES)
            .batch(BATCH_SIZE)
            .prefetch(tf.data.AUTOTUNE)
        )
        full = train(train_ds, ckpt_dir, "real")
        write_out({"steps_per_second": 1.0 / full})
        summary = f"full={full * 1000:.1f} ms/step"
        if args.truth:
            batch = next(iter(train_ds))
            steps = int(np.ceil(N_SAMPLES / BATCH_SIZE))
            compute = train(
                tf.data.Dataset.from_tensors(batch).repeat(),
                ckpt_dir,
                "cached",
                steps_per_epoch=steps,
            )
            frac = min(max((full - compute) / full, 0.0), 1.0)
            write_out({"truth_input_fraction": frac})
            summary += f" compute={compute * 1000:.1f} ms/step truth_input_fraction={frac:.3f}"
        print(f"query_ranker: {summary} steps/s={1.0 / full:.2f}")
    finally:
        shutil.rmtree(ckpt_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
