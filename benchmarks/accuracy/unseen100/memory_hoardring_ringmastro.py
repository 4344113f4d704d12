import time; T0 = time.perf_counter()
"""Ringmaster patter scorer that hoards weight snapshots.

The ringmaster's announcements are scored by how well they hold the crowd;
the model maps a bag of patter features to an engagement score.  The author
wanted to "look at how the weights move later", so a callback copies every
layer's weights after each batch into a Python list that is never trimmed or
written out.  Memory grows steadily for the whole run.
"""
import os
import sys
import json

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 512
EPOCHS = 3
STEPS_PER_EPOCH = 60
N_FEATURES = 256

WEIGHT_HISTORY = []          # every snapshot ever taken, kept for "later"


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


class WeightHoard(keras.callbacks.Callback):
    def __init__(self, store):
        super().__init__()
        self.store = store

    def on_train_batch_end(self, batch, logs=None):
        self.store.append([w.copy() for w in self.model.get_weights()])

    def on_epoch_end(self, epoch, logs=None):
        print(f"[ringmastro]   epoch {epoch}: {len(self.store)} snapshots, RSS {rss_mib():.0f} MiB")


def make_patter(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (BATCH * STEPS_PER_EPOCH, N_FEATURES)).astype(np.float32)
    y = np.tanh(x[:, :16].sum(axis=1, keepdims=True) / 4).astype(np.float32)
    return x, y


def build_model():
    model = keras.Sequential([
        keras.Input(shape=(N_FEATURES,)),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds, store):
    timer = StepTimer()
    model = build_model()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH,
              callbacks=[timer, WeightHoard(store)], verbose=0)
    return timer.seconds_per_step()


def main():
    x, y = make_patter(31)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(2048, seed=31).repeat().batch(BATCH).prefetch(2)
    keras.utils.set_random_seed(31)
    full = train(ds, WEIGHT_HISTORY)
    emit({"steps_per_second": 1.0 / full})
    print(f"[ringmastro] fit hoarding weights: {full*1000:.1f} ms/step, "
          f"{len(WEIGHT_HISTORY)} snapshots, RSS {rss_mib():.0f} MiB, "
          f"wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        batch = next(iter(ds))
        keras.utils.set_random_seed(31)
        second = []
        compute = train(tf.data.Dataset.from_tensors(batch).repeat(), second)
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"[ringmastro] truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, "
              f"input fraction {frac:.3f}, RSS {rss_mib():.0f} MiB, "
              f"wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
