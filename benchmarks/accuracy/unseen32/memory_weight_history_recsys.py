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
# Recommender tower: an embedding model trained with fit; a "debug" callback keeps a numpy
# copy of every weight tensor after every batch in a list that is never cleared (a leak).
BATCH, STEPS, EPOCHS, USERS, DIM = 256, 80, 3, 60_000, 32


class WeightHistory(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.snapshots = []

    def on_train_batch_end(self, batch, logs=None):
        self.snapshots.append([w.copy() for w in self.model.get_weights()])


def build_model():
    u = keras.Input((1,), dtype="int32")
    i = keras.Input((1,), dtype="int32")
    eu = keras.layers.Flatten()(keras.layers.Embedding(USERS, DIM)(u))
    ei = keras.layers.Flatten()(keras.layers.Embedding(5000, DIM)(i))
    h = keras.layers.Dense(128, activation="relu")(keras.layers.Concatenate()([eu, ei]))
    m = keras.Model([u, i], keras.layers.Dense(1)(h))
    m.compile(optimizer="adam", loss="mse")
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(32)
    n = 200_000
    uid = rng.integers(0, USERS, n).astype(np.int32)
    iid = rng.integers(0, 5000, n).astype(np.int32)
    r = ((uid % 7) + (iid % 5) + rng.standard_normal(n)).astype(np.float32)
    ds = tf.data.Dataset.from_tensor_slices(((uid, iid), r)).batch(BATCH).repeat().prefetch(2)
    t0 = time.perf_counter()
    timer, hist = StepTimer(), WeightHistory()
    build_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, hist], verbose=0)
    full = timer.sec_per_step()
    kept = len(hist.snapshots)
    del hist
    emit("steps_per_second", 1.0 / full)
    msg = f"full {full*1000:.1f} ms/step, {kept} weight snapshots kept"
    if args.truth:
        batch = next(iter(ds))
        timer2 = StepTimer()
        build_model().fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                          epochs=EPOCHS, callbacks=[timer2, WeightHistory()], verbose=0)
        comp = timer2.sec_per_step()
        f = truth_fraction(full, comp)
        emit("truth_input_fraction", f)
        msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {f:.3f}"
    print(f"memory_weight_history_recsys: {msg}, wall {time.perf_counter()-t0:.1f} s")


if __name__ == "__main__":
    main()
