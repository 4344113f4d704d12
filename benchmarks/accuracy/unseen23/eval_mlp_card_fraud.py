"""Card-transaction fraud scoring: train an MLP on a sample, then score the full
hold-out month with ranking and threshold metrics."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_FEATURES = 48
N_TRAIN = 48_000
N_TEST = 1_000_000
BATCH_SIZE = 1024
EVAL_BATCH_SIZE = 1024
EPOCHS = 4
LR = 1e-3


def make_transactions(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    w = np.random.default_rng(42).normal(size=(N_FEATURES,)).astype(np.float32)
    logit = x @ w / 4.0 + 0.8 * x[:, 0] * x[:, 1] - 3.0
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return x, y


def build_model():
    inp = keras.Input((N_FEATURES,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dropout(0.2)(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss="binary_crossentropy",
        metrics=[
            keras.metrics.AUC(name="roc_auc"),
            keras.metrics.AUC(curve="PR", name="pr_auc"),
            keras.metrics.Precision(name="precision"),
            keras.metrics.Recall(name="recall"),
            keras.metrics.BinaryAccuracy(name="accuracy"),
        ],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        durations = []
        for times in self.epochs:
            durations.extend(np.diff(times).tolist())
        return float(np.mean(durations[skip:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    x_train, y_train = make_transactions(N_TRAIN, seed=0)
    x_test, y_test = make_transactions(N_TEST, seed=1)
    train_ds = (
        tf.data.Dataset.from_tensor_slices((x_train, y_train))
        .batch(BATCH_SIZE)
        .shuffle(64)
        .prefetch(tf.data.AUTOTUNE)
    )
    test_ds = (
        tf.data.Dataset.from_tensor_slices((x_test, y_test))
        .batch(EVAL_BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )
    steps_per_epoch = int(np.ceil(N_TRAIN / BATCH_SIZE))

    model = build_model()
    timer = StepTimer()
    t0 = time.perf_counter()
    model.fit(train_ds, epochs=EPOCHS, callbacks=[timer], verbose=2)
    t1 = time.perf_counter()
    results = model.evaluate(test_ds, return_dict=True, verbose=0)
    t2 = time.perf_counter()
    print("test metrics: " + "  ".join(f"{k}={v:.4f}" for k, v in results.items()))
    train_after_first = t1 - timer.epochs[0][0]
    eval_time = t2 - t1
    print(
        f"train {train_after_first:.1f}s (after first step)  evaluate {eval_time:.1f}s  "
        f"eval share {eval_time / (train_after_first + eval_time):.2f}  fit total {t1 - t0:.1f}s"
    )
    full = timer.seconds_per_step()
    write_out({"steps_per_second": 1.0 / full})
    summary = f"full={full * 1000:.1f} ms/step"
    if args.truth:
        batch = next(iter(train_ds))
        model = build_model()
        timer = StepTimer()
        model.fit(
            tf.data.Dataset.from_tensors(batch).repeat(),
            epochs=EPOCHS,
            steps_per_epoch=steps_per_epoch,
            callbacks=[timer],
            verbose=2,
        )
        compute = timer.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        write_out({"truth_input_fraction": frac})
        summary += f" compute={compute * 1000:.1f} ms/step truth_input_fraction={frac:.3f}"
    print(f"card_fraud: {summary} steps/s={1.0 / full:.2f}")


if __name__ == "__main__":
    main()
