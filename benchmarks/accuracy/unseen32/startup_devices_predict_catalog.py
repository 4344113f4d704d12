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
# Product-catalog image tagger: service start-up check only. Imports TensorFlow, lists
# devices, builds a small CNN tagger and runs predict on a handful of examples. No training.
def main():
    t0 = time.perf_counter()
    cpus = tf.config.list_physical_devices("CPU")
    gpus = tf.config.list_physical_devices("GPU")
    inp = keras.Input((128, 128, 3))
    h = inp
    for f in (32, 64, 128, 256):
        h = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(h)
        h = keras.layers.BatchNormalization()(h)
        h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    model = keras.Model(inp, keras.layers.Dense(40, activation="sigmoid")(h))
    x = np.random.default_rng(32).random((8, 128, 128, 3)).astype(np.float32)
    p = model.predict(x, verbose=0)
    print(f"startup_devices_predict_catalog: {len(cpus)} CPU, {len(gpus)} GPU, "
          f"{model.count_params()} params, predict {p.shape}, {time.perf_counter()-t0:.1f} s after import")


if __name__ == "__main__":
    main()
