"""Wind-turbine power-curve / fault model saved as a .keras file after every batch.

The SCADA windows are in memory; training is cheap.  Because the training
job runs on pre-emptible machines, a callback writes the complete model
(architecture + weights + optimizer state) with model.save(".keras") every
SAVE_EVERY batches (here: every batch), keeping a rolling set of 3 files, so the wall time is
dominated by serialisation and zip writing.
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

WINDOW = 144  # 24 h of 10-minute SCADA records
CHANNELS = 12
BATCH = 16
STEPS_PER_EPOCH = 60
EPOCHS = 3
SAVE_EVERY = 1
KEEP = 3
HIDDEN = 1536


class StepClock(keras.callbacks.Callback):
    """Stamps each batch end; time spent in saves between two stamps is
    taken out, so a step's time covers the training step only."""

    def __init__(self):
        super().__init__()
        self.epochs = []
        self.saved_this_epoch = 0.0

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])
        self.saved_this_epoch = 0.0

    def on_train_batch_end(self, batch, logs=None):
        # seconds spent saving so far this epoch are taken off the clock
        self.epochs[-1].append(time.perf_counter() - self.saved_this_epoch)

    def seconds_per_step(self):
        gaps = []
        for ts in self.epochs:
            gaps += list(np.diff(ts))
        return float(np.mean(gaps[4:]))  # steps 5 onward


class SaveEveryNBatches(keras.callbacks.Callback):
    """Listed after StepClock; reports each save's duration to the clock."""

    def __init__(self, directory, every, clock):
        super().__init__()
        self.directory, self.every, self.clock = directory, every, clock
        self.seen, self.seconds, self.saved = 0, 0.0, []

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen % self.every:
            return
        t = time.perf_counter()
        path = os.path.join(self.directory, f"turbine_step{self.seen:05d}.keras")
        self.model.save(path)
        self.saved.append(path)
        while len(self.saved) > KEEP:
            os.remove(self.saved.pop(0))
        took = time.perf_counter() - t
        self.seconds += took
        self.clock.saved_this_epoch += took


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(kv) + "\n")


def make_scada(n, rng):
    t = np.arange(WINDOW)
    wind = 8 + 3 * np.sin(2 * np.pi * t / 144 + rng.uniform(0, 6, (n, 1))) + rng.normal(0, 1, (n, WINDOW))
    x = np.stack([wind] + [wind * rng.uniform(0.5, 1.5) + rng.normal(0, 1, (n, WINDOW))
                           for _ in range(CHANNELS - 1)], -1).astype("float32")
    y = (np.clip(wind, 3, 13) ** 3 / 13 ** 3).mean(1, keepdims=True).astype("float32")
    return (x - x.mean()) / x.std(), y


def build_model():
    keras.utils.set_random_seed(29)
    model = keras.Sequential([
        keras.Input((WINDOW, CHANNELS)),
        keras.layers.Conv1D(32, 5, activation="relu"),
        keras.layers.MaxPooling1D(4),
        keras.layers.Flatten(),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds, directory):
    model = build_model()
    clock = StepClock()
    saver = SaveEveryNBatches(directory, SAVE_EVERY, clock)
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[clock, saver], verbose=0)
    return clock.seconds_per_step(), saver.seconds, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="u36_checkpoint_keras_save_every_n_batches_wind_turbine_")
    try:
        x, y = make_scada(BATCH * STEPS_PER_EPOCH, np.random.default_rng(0))
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=0).repeat().batch(BATCH).prefetch(2)
        t0 = time.perf_counter()
        full, save_s, fit_s = train(ds, workdir)
        size_mb = max(os.path.getsize(os.path.join(workdir, f)) for f in os.listdir(workdir)) / 2**20
        report(steps_per_second=1.0 / full)
        msg = (f"wind turbine: {full * 1e3:.1f} ms/step, {1.0 / full:.2f} steps/s, "
               f"saves {save_s:.1f}s of fit {fit_s:.1f}s ({save_s / fit_s:.0%}), {size_mb:.0f} MiB per .keras file")
        if args.truth:
            batch = next(iter(ds))
            compute, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), workdir)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            report(truth_input_fraction=frac)
            msg += f", compute-only {compute * 1e3:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(msg + f", wall {time.perf_counter() - t0:.1f}s")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
