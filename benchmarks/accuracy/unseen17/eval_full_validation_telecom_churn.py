"""Telecom churn model validated every epoch on the full hold-out customer base."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--epochs", type=int, default=4)
parser.add_argument("--steps", type=int, default=30)
parser.add_argument("--batch-size", type=int, default=256)
parser.add_argument("--n-train", type=int, default=30000)
parser.add_argument("--n-val", type=int, default=120000)
args = parser.parse_args()

N_FEATURES = 80


def make_customers(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    tenure = rng.exponential(24, size=n)
    x[:, 0] = np.log1p(tenure)
    logit = -1.0 + 0.8 * x[:, 1] - 0.6 * x[:, 0] + 0.4 * x[:, 2] * x[:, 3]
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return x, y


x_train, y_train = make_customers(args.n_train, 0)
x_val, y_val = make_customers(args.n_val, 1)

train_ds = (
    tf.data.Dataset.from_tensor_slices((x_train, y_train))
    .shuffle(args.n_train, seed=0)
    .repeat()
    .batch(args.batch_size, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)


def build_model():
    inp = keras.Input(shape=(N_FEATURES,))
    x = keras.layers.Dense(768, activation="relu")(inp)
    x = keras.layers.Dropout(0.2)(x)
    x = keras.layers.Dense(768, activation="relu")(x)
    x = keras.layers.Dropout(0.2)(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer="adam",
        loss="binary_crossentropy",
        metrics=[keras.metrics.AUC(name="auc"), keras.metrics.AUC(curve="PR", name="pr_auc")],
    )
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []
        self.epoch = 0
        self.eval_seconds = 0.0
        self._t_eval = None

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append((self.epoch, time.perf_counter()))

    def on_test_begin(self, logs=None):
        self._t_eval = time.perf_counter()

    def on_test_end(self, logs=None):
        self.eval_seconds += time.perf_counter() - self._t_eval


def seconds_per_step(stamps, skip=5):
    gaps = [t1 - t0 for (e0, t0), (e1, t1) in zip(stamps, stamps[1:]) if e0 == e1]
    return float(np.mean(gaps[skip - 1 :]))


def write_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def train(ds):
    model = build_model()
    clock = StepClock()
    history = model.fit(
        ds,
        steps_per_epoch=args.steps,
        epochs=args.epochs,
        validation_data=(x_val, y_val),
        validation_batch_size=args.batch_size,
        callbacks=[clock],
        verbose=0,
    )
    t_end = time.perf_counter()
    after_first = t_end - clock.stamps[0][1]
    print(
        f"val_auc={history.history['val_auc'][-1]:.3f}  "
        f"validation {clock.eval_seconds:.1f}s of {after_first:.1f}s after first step "
        f"({100 * clock.eval_seconds / after_first:.0f}%)"
    )
    return seconds_per_step(clock.stamps)


def main():
    full = train(train_ds)
    write_result({"steps_per_second": 1.0 / full})
    msg = f"train: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
    if args.truth:
        batch = next(iter(train_ds))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        compute = train(cached)
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_result({"truth_input_fraction": frac})
        msg += f" | cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(msg)


if __name__ == "__main__":
    main()
