"""Product-catalogue categorisation from listing titles.

A large title-token embedding feeds a wide classifier over catalogue leaf
categories. Weights are saved every few batches so a preempted job can resume.
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

VOCAB = 150_000
TITLE_LEN = 24
EMBED = 128
N_CATEGORIES = 3000
N_LISTINGS = 40_000
BATCH = 128
STEPS = 48
SAVE_EVERY = 4
LR = 1e-3


def make_listings(seed=0):
    rng = np.random.default_rng(seed)
    cats = rng.integers(0, N_CATEGORIES, size=N_LISTINGS)
    tokens = (rng.zipf(1.1, size=(N_LISTINGS, TITLE_LEN)) + cats[:, None] * 37) % VOCAB
    return tokens.astype(np.int32), cats.astype(np.int32)


def build_model():
    model = keras.Sequential(
        [
            keras.Input((TITLE_LEN,), dtype="int32"),
            keras.layers.Embedding(VOCAB, EMBED),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(1024, activation="relu"),
            keras.layers.Dense(N_CATEGORIES),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


class FrequentCheckpoint(keras.callbacks.Callback):
    def __init__(self, folder, every):
        super().__init__()
        self.folder = folder
        self.every = every
        self.seconds = 0.0
        self.saves = 0

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % self.every == 0:
            t0 = time.perf_counter()
            self.model.save_weights(os.path.join(self.folder, f"w_{batch}.weights.h5"))
            self.seconds += time.perf_counter() - t0
            self.saves += 1


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        gaps = np.concatenate([np.diff(s) for s in self.stamps if len(s) > 1])
        return float(np.mean(gaps[skip:]))

    def span(self):
        return self.stamps[-1][-1] - self.stamps[0][0]


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def fit_once(ds, folder):
    model = build_model()
    ckpt = FrequentCheckpoint(folder, SAVE_EVERY)
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=1, callbacks=[ckpt, timer], verbose=2)
    print(
        f"{ckpt.saves} checkpoints took {ckpt.seconds:.1f}s of {timer.span():.1f}s training "
        f"({100 * ckpt.seconds / timer.span():.0f}%)"
    )
    return timer.seconds_per_step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="u28_checkpoint_savecb_productcatalog_")
    try:
        tokens, cats = make_listings()
        train_ds = (
            tf.data.Dataset.from_tensor_slices((tokens, cats))
            .shuffle(10_000)
            .batch(BATCH, drop_remainder=True)
            .repeat()
            .prefetch(tf.data.AUTOTUNE)
        )
        full = fit_once(train_ds, workdir)
        write_out({"steps_per_second": 1.0 / full})
        summary = f"catalogue: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

        if args.truth:
            batch = next(iter(train_ds))
            compute = fit_once(tf.data.Dataset.from_tensors(batch).repeat(), workdir)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            write_out({"truth_input_fraction": frac})
            summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(summary)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
