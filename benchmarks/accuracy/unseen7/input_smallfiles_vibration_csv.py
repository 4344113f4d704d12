"""Bearing-fault classification from accelerometer snippets.

The script first dumps a few thousand small CSV files (one snippet per file, 3 axes)
into a temporary folder, the way a data-logger export looks, then trains a 1-D CNN
with a hand-written training loop that reads those files through tf.data.
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf

N_FILES = 2000
RECORD_LEN = 384  # rows stored per file
SNIPPET_LEN = 256  # random window fed to the model
N_CLASSES = 4  # healthy, inner race, outer race, ball fault
BATCH = 64
TRAIN_STEPS = 450
WARMUP = 5
LOG_EVERY = 100


def write_snippets(folder, n_files, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(RECORD_LEN) / 2000.0
    for i in range(n_files):
        cls = int(rng.integers(N_CLASSES))
        freq = [0, 162.0, 107.0, 141.0][cls]
        sig = rng.normal(0, 0.3, size=(RECORD_LEN, 3))
        if cls:
            sig += 0.8 * np.sin(2 * np.pi * freq * t)[:, None] * rng.uniform(0.5, 1.5, size=3)
        path = os.path.join(folder, f"snip_{i:05d}_c{cls}.csv")
        np.savetxt(path, sig, fmt="%.4f", delimiter=",", header="ax,ay,az", comments="")


def load_snippet(path):
    raw = tf.io.read_file(path)
    lines = tf.strings.split(tf.strings.strip(raw), "\n")[1:]
    cols = tf.io.decode_csv(lines, record_defaults=[[0.0], [0.0], [0.0]])
    x = tf.stack(cols, axis=-1)
    x = tf.image.random_crop(x, size=(SNIPPET_LEN, 3))  # random window augmentation
    x = (x - tf.reduce_mean(x, axis=0)) / (tf.math.reduce_std(x, axis=0) + 1e-6)
    label_str = tf.strings.regex_replace(path, r".*_c(\d)\.csv$", r"\1")
    y = tf.strings.to_number(label_str, out_type=tf.int32)
    return x, y


def make_pipeline(folder, seed):
    files = tf.data.Dataset.list_files(os.path.join(folder, "*.csv"), shuffle=True, seed=seed)
    ds = files.map(load_snippet)  # serial parse, no prefetch
    return ds.batch(BATCH, drop_remainder=True).repeat()


def build_model():
    return keras.Sequential(
        [
            keras.Input(shape=(SNIPPET_LEN, 3)),
            keras.layers.Conv1D(32, 7, strides=2, activation="relu"),
            keras.layers.Conv1D(64, 5, strides=2, activation="relu"),
            keras.layers.Conv1D(64, 3, activation="relu"),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(N_CLASSES),
        ]
    )


def run_loop(train_step, dataset, n_steps, log=False):
    """Runs n_steps of training, returns per-step wall times (including the wait for data)."""
    durations = []
    it = iter(dataset)
    t_prev = time.perf_counter()
    for step in range(n_steps):
        x, y = next(it)
        loss = train_step(x, y)
        if log and step % LOG_EVERY == 0:
            print(f"step {step:4d}  loss {float(loss):.4f}")
        now = time.perf_counter()
        durations.append(now - t_prev)
        t_prev = now
    return durations


def write_metric(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    ap.add_argument("--steps", type=int, default=TRAIN_STEPS)
    args = ap.parse_args()

    workdir = tempfile.mkdtemp(prefix="vib_csv_")
    try:
        print(f"writing {N_FILES} snippet files to {workdir}")
        write_snippets(workdir, N_FILES)

        model = build_model()
        optimizer = keras.optimizers.Adam(learning_rate=1e-3)
        loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        @tf.function
        def train_step(x, y):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = loss_fn(y, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        t0 = time.perf_counter()
        run_loop(train_step, make_pipeline(workdir, seed=0), args.steps, log=True)
        elapsed = time.perf_counter() - t0
        print(f"trained {args.steps} steps in {elapsed:.1f}s ({args.steps / elapsed:.1f} steps/s)")
        write_metric("steps_per_second", args.steps / elapsed)

        if args.truth:
            full = run_loop(train_step, make_pipeline(workdir, seed=1), args.steps)
            cached = make_pipeline(workdir, seed=2).take(1).cache().repeat()
            comp = run_loop(train_step, cached, args.steps)
            full_m = float(np.mean(full[WARMUP:]))
            comp_m = float(np.mean(comp[WARMUP:]))
            frac = min(1.0, max(0.0, (full_m - comp_m) / full_m))
            print(
                f"truth: full {full_m * 1e3:.2f} ms, compute {comp_m * 1e3:.2f} ms, input {frac:.3f}"
            )
            write_metric("truth_input_fraction", frac)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
