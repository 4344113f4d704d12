"""Wafer-map defect classifier: short training run, then scoring of the full hold-out lot."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

MAP_SIZE = 40
N_CLASSES = 9
N_TRAIN = 2048
N_HOLDOUT = 24000
BATCH_SIZE = 64
EPOCHS = 3
PREDICT_BATCH = 256
CLASS_NAMES = ["none", "center", "donut", "edge_loc", "edge_ring", "loc", "near_full",
               "random", "scratch"]


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times = []
        self.epoch_times = []

    def on_epoch_begin(self, epoch, logs=None):
        self.times = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch_times.append(self.times)

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        diffs = np.concatenate([np.diff(t) for t in self.epoch_times])
        return float(np.mean(diffs[skip:]))


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


def make_wafers(rng, n):
    yy, xx = np.mgrid[0:MAP_SIZE, 0:MAP_SIZE] - (MAP_SIZE - 1) / 2
    r = np.sqrt(yy**2 + xx**2) / (MAP_SIZE / 2)
    labels = rng.integers(0, N_CLASSES, n)
    maps = (rng.random((n, MAP_SIZE, MAP_SIZE)) < 0.05).astype(np.float32)
    maps[:, r < 0.25] += (labels[:, None] == 1) * 0.8
    ring = (r > 0.5) & (r < 0.7)
    maps[:, ring] += (labels[:, None] == 2) * 0.8
    maps[:, r > 0.85] += (labels[:, None] == 4) * 0.8
    maps = np.clip(maps + rng.normal(0, 0.1, maps.shape), 0, 1) * (r <= 1.0)
    return maps[..., None].astype(np.float32), labels


def build_model():
    inputs = keras.Input(shape=(MAP_SIZE, MAP_SIZE, 1))
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def score_holdout(model, x_hold, y_hold):
    confusion = np.zeros((N_CLASSES, N_CLASSES), dtype=np.int64)
    entropies, top2_hits = [], 0
    for start in range(0, len(x_hold), PREDICT_BATCH * 20):
        xb = x_hold[start : start + PREDICT_BATCH * 20]
        yb = y_hold[start : start + PREDICT_BATCH * 20]
        probs = model.predict(xb, batch_size=PREDICT_BATCH, verbose=0)
        pred = probs.argmax(axis=1)
        np.add.at(confusion, (yb, pred), 1)
        entropies.append(-(probs * np.log(probs + 1e-9)).sum(axis=1))
        top2 = np.argsort(probs, axis=1)[:, -2:]
        top2_hits += int((top2 == yb[:, None]).any(axis=1).sum())
    return confusion, np.concatenate(entropies), top2_hits / len(x_hold)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x_train, y_train = make_wafers(rng, N_TRAIN)
    x_hold, y_hold = make_wafers(rng, N_HOLDOUT)
    train_ds = (
        tf.data.Dataset.from_tensor_slices((x_train, y_train))
        .shuffle(N_TRAIN, seed=0)
        .batch(BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )

    model = build_model()
    clock = StepClock()
    t_fit = time.perf_counter()
    model.fit(train_ds, epochs=EPOCHS, callbacks=[clock], verbose=0)
    t_eval = time.perf_counter()
    confusion, entropy, top2 = score_holdout(model, x_hold, y_hold)
    t_done = time.perf_counter()
    full = clock.seconds_per_step()
    append_result(steps_per_second=1.0 / full)

    acc = np.trace(confusion) / confusion.sum()
    recall = confusion.diagonal() / np.maximum(confusion.sum(axis=1), 1)
    print("per-class recall: " + ", ".join(f"{n}={r:.2f}" for n, r in zip(CLASS_NAMES, recall)))
    first_step = clock.epoch_times[0][0]
    train_s = t_eval - first_step
    eval_s = t_done - t_eval
    msg = (f"wafermaps: holdout acc={acc:.3f} top2={top2:.3f} mean entropy={entropy.mean():.3f}; "
           f"{1.0 / full:.2f} steps/s; train {train_s:.1f}s, holdout scoring {eval_s:.1f}s "
           f"({eval_s / (train_s + eval_s):.0%} of time after first step)")

    if args.truth:
        steps_per_epoch = int(np.ceil(N_TRAIN / BATCH_SIZE))
        batch = (x_train[:BATCH_SIZE], y_train[:BATCH_SIZE])
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        model = build_model()
        clock = StepClock()
        model.fit(cached, epochs=EPOCHS, steps_per_epoch=steps_per_epoch, callbacks=[clock],
                  verbose=0)
        compute = clock.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        msg += f", truth_input_fraction={frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
