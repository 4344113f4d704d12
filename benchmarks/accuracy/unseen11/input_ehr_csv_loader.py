"""Train an MLP that predicts 30-day readmission from synthetic EHR lab panels.

Data feeding: at start-up the script writes one small CSV file per hospital stay (long format:
hour, lab name, value) into a temporary directory. The training loop calls a plain function,
``load_batch(paths)``, once per step; it opens and parses the batch's CSV files with the ``csv``
module and aggregates every lab into mean/min/max/last features, all on the loop's own thread.
The model is updated by a ``@tf.function`` train step that uses ``tf.GradientTape``.
"""

import argparse
import csv
import json
import os
import tempfile
import time

import numpy as np
import tensorflow as tf

LABS = [
    "sodium", "potassium", "chloride", "bicarbonate", "bun", "creatinine", "glucose", "calcium",
    "magnesium", "phosphate", "hemoglobin", "wbc", "platelets", "lactate", "albumin", "inr",
]  # fmt: skip
LAB_INDEX = {name: i for i, name in enumerate(LABS)}
N_STAYS = 2048
ROWS_PER_STAY = 45
BATCH_SIZE = 128
STEPS = 110
WARMUP = 5
LOG_EVERY = 20


def write_stays(root, rng):
    """Write one CSV per stay; the first line carries the outcome label."""
    paths = []
    base = rng.normal(size=len(LABS))
    for stay in range(N_STAYS):
        risk = rng.normal()
        label = int(risk + 0.3 * rng.normal() > 0.5)
        path = os.path.join(root, f"stay_{stay:05d}.csv")
        with open(path, "w", newline="") as f:
            f.write(f"# outcome={label}\n")
            writer = csv.writer(f)
            writer.writerow(["hour", "lab", "value"])
            for _ in range(ROWS_PER_STAY):
                lab = int(rng.integers(len(LABS)))
                value = base[lab] + 0.4 * risk * (lab % 3) + rng.normal()
                writer.writerow([int(rng.integers(72)), LABS[lab], f"{value:.4f}"])
        paths.append(path)
    return paths


def load_batch(paths):
    """Parse the CSV files of one batch into (features, labels)."""
    feats = np.zeros((len(paths), 4 * len(LABS)), dtype=np.float32)
    labels = np.zeros((len(paths), 1), dtype=np.float32)
    for row_i, path in enumerate(paths):
        sums = [0.0] * len(LABS)
        counts = [0] * len(LABS)
        mins = [float("inf")] * len(LABS)
        maxs = [float("-inf")] * len(LABS)
        last = [(-1, 0.0)] * len(LABS)
        with open(path, newline="") as f:
            labels[row_i, 0] = float(f.readline().strip().split("=")[1])
            reader = csv.DictReader(f)
            for rec in reader:
                j = LAB_INDEX[rec["lab"]]
                v = float(rec["value"])
                hour = int(rec["hour"])
                sums[j] += v
                counts[j] += 1
                mins[j] = min(mins[j], v)
                maxs[j] = max(maxs[j], v)
                if hour >= last[j][0]:
                    last[j] = (hour, v)
        for j in range(len(LABS)):
            if counts[j]:
                feats[row_i, 4 * j : 4 * j + 4] = (
                    sums[j] / counts[j],
                    mins[j],
                    maxs[j],
                    last[j][1],
                )
    return feats, labels


def build_model():
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=(4 * len(LABS),)),
            tf.keras.layers.Dense(1536, activation="relu"),
            tf.keras.layers.Dense(1536, activation="relu"),
            tf.keras.layers.Dense(1536, activation="relu"),
            tf.keras.layers.Dense(512, activation="relu"),
            tf.keras.layers.Dense(1),
        ]
    )


def train(paths, model, optimizer, loss_fn, cached_batch=None):
    """Run the training loop; returns the per-step wall times."""

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    steps_per_epoch = len(paths) // BATCH_SIZE
    order = list(paths)
    rng = np.random.default_rng(1)
    losses, step_times = [], []
    running = 0.0
    for step in range(STEPS):
        t0 = time.perf_counter()
        i = step % steps_per_epoch
        if i == 0:
            rng.shuffle(order)
        if cached_batch is None:
            x, y = load_batch(order[i * BATCH_SIZE : (i + 1) * BATCH_SIZE])
        else:
            x, y = cached_batch
        loss = float(train_step(x, y))
        losses.append(loss)
        running = 0.9 * running + 0.1 * loss if step else loss
        if (step + 1) % LOG_EVERY == 0:
            print(f"step {step + 1:4d}  loss {loss:.4f}  running {running:.4f}")
        step_times.append(time.perf_counter() - t0)
    return step_times


def append_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--truth", action="store_true", help="also measure input-wait fraction")
    args = parser.parse_args()

    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="ehr_") as root:
        paths = write_stays(root, rng)
        loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)

        model = build_model()
        times = train(paths, model, tf.keras.optimizers.Adam(1e-4), loss_fn)
        full = float(np.mean(times[WARMUP:]))
        sps = 1.0 / full
        append_result({"steps_per_second": sps})
        summary = f"input_ehr_csv_loader: {STEPS} steps, {sps:.2f} steps/s"

        if args.truth:
            cached = load_batch(paths[:BATCH_SIZE])
            model = build_model()
            times = train(paths, model, tf.keras.optimizers.Adam(1e-4), loss_fn, cached)
            compute = float(np.mean(times[WARMUP:]))
            frac = min(1.0, max(0.0, (full - compute) / full))
            append_result({"truth_input_fraction": frac})
            summary += (
                f", full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms, truth {frac:.3f}"
            )
    print(summary)


if __name__ == "__main__":
    main()
