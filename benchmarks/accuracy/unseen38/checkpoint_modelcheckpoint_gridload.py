"""Day-ahead electricity load forecasting with frequent full-model checkpoints.

An MLP maps a week of hourly lags plus calendar features to the next 24
hours.  keras.callbacks.ModelCheckpoint writes a complete .keras file
(weights + optimizer state) every SAVE_EVERY batches.  Data is an in-memory
cached tf.data pipeline.  The step timer excludes the time spent inside the
checkpoint callback (a head/tail pair of callbacks brackets it).
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

LAGS = 168
CAL = 12
HORIZON = 24
N_ROWS = 20_000
BATCH = 16
STEPS = 60
EPOCHS = 3
SAVE_EVERY = 2


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Placed first: stamps the end of each step before other callbacks run."""

    def on_train_begin(self, logs=None):
        self.gaps = []
        self.resumed = None

    def on_epoch_begin(self, epoch, logs=None):
        self.resumed = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.resumed is not None:
            self.gaps.append(now - self.resumed)

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


class StepTimerTail(keras.callbacks.Callback):
    """Placed last: marks when the remaining callbacks (the save) are done."""

    def __init__(self, head):
        super().__init__()
        self.head = head

    def on_train_batch_end(self, batch, logs=None):
        self.head.resumed = time.perf_counter()


def make_series(rng):
    hours = np.arange(N_ROWS + LAGS + HORIZON)
    load = (50 + 10 * np.sin(2 * np.pi * hours / 24) + 5 * np.sin(2 * np.pi * hours / 168)
            + rng.normal(0, 2, hours.shape)).astype(np.float32)
    idx = np.arange(N_ROWS)[:, None]
    x_lag = load[idx + np.arange(LAGS)]
    y = load[idx + LAGS + np.arange(HORIZON)]
    cal = rng.normal(0, 1, (N_ROWS, CAL)).astype(np.float32)
    x = np.concatenate([(x_lag - 50) / 10, cal], axis=1).astype(np.float32)
    return x, ((y - 50) / 10).astype(np.float32)


def build_model():
    model = keras.Sequential([
        keras.Input((LAGS + CAL,)),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(HORIZON),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds, ckpt_dir, tag):
    keras.utils.set_random_seed(0)
    model = build_model()
    head = StepTimer()
    ckpt = keras.callbacks.ModelCheckpoint(
        os.path.join(ckpt_dir, tag + "_e{epoch:02d}.keras"), save_freq=SAVE_EVERY)
    t = time.perf_counter()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS,
                     callbacks=[head, ckpt, StepTimerTail(head)], verbose=0)
    return head.seconds_per_step(), hist.history, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    ckpt_dir = tempfile.mkdtemp(prefix="u38_checkpoint_modelcheckpoint_gridload_")
    try:
        x, y = make_series(np.random.default_rng(4))
        ds = (tf.data.Dataset.from_tensor_slices((x, y))
              .cache().shuffle(N_ROWS).repeat().batch(BATCH).prefetch(2))
        full, hist, fit_wall = train(ds, ckpt_dir, "full")
        report("steps_per_second", 1.0 / full)
        n_steps = STEPS * EPOCHS
        msg = (f"gridload: {full * 1000:.1f} ms/step, loss {hist['loss'][-1]:.4f}, "
               f"steps {full * n_steps:.1f}s of fit {fit_wall:.1f}s")
        if args.truth:
            fixed = next(iter(ds))
            compute, _, _ = train(tf.data.Dataset.from_tensors(fixed).repeat(), ckpt_dir, "fixed")
            frac = min(max((full - compute) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += f", compute-only {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    finally:
        shutil.rmtree(ckpt_dir, ignore_errors=True)
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
