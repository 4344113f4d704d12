import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of each train batch; gaps within an epoch only."""

    def on_train_begin(self, logs=None):
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.cur = []
        self.epochs.append(self.cur)

    def on_train_batch_end(self, batch, logs=None):
        self.cur.append(time.perf_counter())

    def sec_per_step(self):
        gaps = []
        for ts in self.epochs:
            gaps.extend(np.diff(ts).tolist())
        return float(np.mean(gaps[5:]))


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def truth_fraction(full, compute):
    return float(min(1.0, max(0.0, (full - compute) / full)))
# Weather-station nowcasting: stacked GRUs over hourly multivariate windows held in memory;
# tf.data from_tensor_slices over cached arrays, so the recurrent math dominates.
BATCH, STEPS, EPOCHS, T, F = 64, 40, 3, 96, 24


def build_model():
    inp = keras.Input((T, F))
    h = keras.layers.GRU(256, return_sequences=True)(inp)
    h = keras.layers.GRU(256)(h)
    m = keras.Model(inp, keras.layers.Dense(1)(h))
    m.compile(optimizer="adam", loss="mse")
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(32)
    x = rng.standard_normal((4096, T, F)).astype(np.float32)
    y = x[:, -6:, 0].mean(axis=1, keepdims=True)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(4096, seed=1).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
    t0 = time.perf_counter()
    timer = StepTimer()
    build_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit("steps_per_second", 1.0 / full)
    msg = f"full {full*1000:.1f} ms/step"
    if args.truth:
        batch = next(iter(ds))
        timer2 = StepTimer()
        build_model().fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                          epochs=EPOCHS, callbacks=[timer2], verbose=0)
        comp = timer2.sec_per_step()
        f = truth_fraction(full, comp)
        emit("truth_input_fraction", f)
        msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {f:.3f}"
    print(f"compute_gru_fit_weather: {msg}, wall {time.perf_counter()-t0:.1f} s")


if __name__ == "__main__":
    main()
