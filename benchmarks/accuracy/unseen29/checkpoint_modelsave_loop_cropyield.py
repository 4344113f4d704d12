"""County-level crop-yield regression from weekly weather and soil features.

The agronomy team wants a restorable artefact after every short training round,
so the script trains in rounds of a few steps and after each round writes a
full ``.keras`` model file plus a ``tf.train.Checkpoint`` (model + optimizer)
into a temporary run folder. The model carries a large county embedding table.
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

N_COUNTIES = 120000
EMB = 192
N_WEEKS = 30
N_WEATHER = 8
BATCH = 256
STEPS_PER_ROUND = 6
ROUNDS = 12
N_ROWS = 50000


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_data(seed=0):
    rng = np.random.default_rng(seed)
    county = rng.integers(0, N_COUNTIES, N_ROWS).astype(np.int32)
    weather = rng.normal(0, 1, (N_ROWS, N_WEEKS, N_WEATHER)).astype(np.float32)
    soil = rng.normal(0, 1, (N_ROWS, 12)).astype(np.float32)
    y = (weather[:, 10:20, 0].mean(1) - 0.5 * weather[:, :, 1].std(1) + 0.3 * soil[:, 0]
         + 0.001 * (county % 97)).astype(np.float32)
    return (county, weather, soil), y


def build_model():
    c_in = keras.Input((), dtype="int32")
    w_in = keras.Input((N_WEEKS, N_WEATHER))
    s_in = keras.Input((12,))
    c = keras.layers.Embedding(N_COUNTIES, EMB)(c_in)
    w = keras.layers.Conv1D(32, 4, activation="relu")(w_in)
    w = keras.layers.GlobalAveragePooling1D()(w)
    x = keras.layers.Concatenate()([c, w, s_in])
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    model = keras.Model([c_in, w_in, s_in], out)
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds, run_dir):
    os.makedirs(run_dir, exist_ok=True)
    keras.utils.set_random_seed(1)
    model = build_model()
    timer = StepTimer()
    ckpt = tf.train.Checkpoint(model=model, optimizer=model.optimizer)
    manager = tf.train.CheckpointManager(ckpt, os.path.join(run_dir, "ckpt"), max_to_keep=3)
    save_s = 0.0
    for r in range(ROUNDS):
        model.fit(ds, epochs=r + 1, initial_epoch=r, steps_per_epoch=STEPS_PER_ROUND,
                  callbacks=[timer], verbose=0)
        t = time.perf_counter()
        model.save(os.path.join(run_dir, f"cropyield_round{r:02d}.keras"))
        manager.save()
        save_s += time.perf_counter() - t
    return timer.seconds_per_step(), save_s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    run_dir = tempfile.mkdtemp(prefix="u29_cropyield_")
    try:
        x, y = make_data()
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_ROWS, seed=0).repeat() \
            .batch(BATCH).prefetch(tf.data.AUTOTUNE)
        t_fit = time.perf_counter()
        full, save_s = train(ds, os.path.join(run_dir, "full"))
        train_wall = time.perf_counter() - t_fit
        report("steps_per_second", 1.0 / full)
        msg = (f"cropyield: {1.0 / full:.2f} steps/s, saving {save_s:.1f}s of {train_wall:.1f}s "
               f"({100 * save_s / train_wall:.0f}%)")
        if args.truth:
            batch = next(iter(ds))
            compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat(),
                               os.path.join(run_dir, "truth"))
            frac = min(max((full - compute) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += f", compute-only {1.0 / compute:.2f} steps/s, input fraction {frac:.3f}"
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
