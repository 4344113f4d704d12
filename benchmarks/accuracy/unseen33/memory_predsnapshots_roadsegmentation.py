"""Drivable-area / lane segmentation on dashcam-like tiles.

To make a "how the masks evolve" animation later, a callback runs
predict_on_batch on a fixed monitor batch after every training batch and
appends the NumPy probability maps (plus a float64 overlay frame) to a list that is never trimmed, so the
process's resident memory grows step after step.
"""
import argparse
import json
import os
import resource
import time

import numpy as np
import tensorflow as tf
import keras

SIZE = 64
N_TILES = 2048
BATCH = 32
STEPS = 80
EPOCHS = 2
MONITOR = 64
N_CLASSES = 3
PALETTE = np.array([[0.0, 0.0, 0.0], [0.2, 0.8, 0.2], [1.0, 1.0, 0.0]])  # background, road, lane


class MaskSnapshots(keras.callbacks.Callback):
    def __init__(self, monitor_x):
        super().__init__()
        self.monitor_x = monitor_x
        self.snapshots = []

    def on_train_batch_end(self, batch, logs=None):
        probs = np.asarray(self.model.predict_on_batch(self.monitor_x))
        overlay = 0.6 * self.monitor_x + 0.4 * PALETTE[probs.argmax(-1)]  # frame for the GIF
        self.snapshots.append((probs, overlay))


class StepClock(keras.callbacks.Callback):
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


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(kv) + "\n")


def synth_tiles(rng):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / SIZE
    x = rng.normal(0.4, 0.1, (N_TILES, SIZE, SIZE, 3)).astype(np.float32)
    y = np.zeros((N_TILES, SIZE, SIZE), np.int32)
    for i in range(N_TILES):
        horizon = rng.uniform(0.3, 0.5)
        slope = rng.uniform(-0.4, 0.4)
        road = (yy > horizon) & (np.abs(xx - 0.5 - slope * (yy - horizon)) < (yy - horizon) * 0.8)
        lane = road & (np.abs(xx - 0.5 - slope * (yy - horizon)) < 0.02 + (yy - horizon) * 0.03)
        y[i][road] = 1
        y[i][lane] = 2
        x[i][road] += np.float32([0.1, 0.1, 0.1])
        x[i][lane] += np.float32([0.4, 0.4, 0.2])
    return x, y


def make_model():
    inputs = keras.Input((SIZE, SIZE, 3))
    c1 = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(inputs)
    p1 = keras.layers.MaxPooling2D(2)(c1)
    c2 = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(p1)
    p2 = keras.layers.MaxPooling2D(2)(c2)
    b = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(p2)
    u2 = keras.layers.Concatenate()([keras.layers.UpSampling2D(2)(b), c2])
    d2 = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(u2)
    u1 = keras.layers.Concatenate()([keras.layers.UpSampling2D(2)(d2), c1])
    d1 = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(u1)
    model = keras.Model(inputs, keras.layers.Conv2D(N_CLASSES, 1, activation="softmax")(d1))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train(ds, monitor_x, clock):
    keras.utils.set_random_seed(13)
    model = make_model()
    snaps = MaskSnapshots(monitor_x)
    t0 = time.perf_counter()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[snaps, clock], verbose=0)
    return hist, len(snaps.snapshots), time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    x, y = synth_tiles(np.random.default_rng(0))
    monitor_x = x[-MONITOR:]
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_TILES, seed=0).batch(BATCH).repeat().prefetch(2)
    clock = StepClock()
    hist, n_snaps, wall = train(ds, monitor_x, clock)
    full = clock.seconds_per_step()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    report(steps_per_second=1.0 / full)
    msg = (f"roadsegmentation: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, {n_snaps} snapshots, "
           f"peak rss {peak:.2f} GiB, acc {hist.history['accuracy'][-1]:.3f}")
    if args.truth:
        clock2 = StepClock()
        train(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat(), monitor_x, clock2)
        compute = clock2.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report(truth_input_fraction=frac)
        msg += f", truth_input_fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
