"""Credit default prediction with a wide MLP on an in-memory tabular dataset.

All features are pre-computed numpy arrays held in RAM, so model.fit spends its
time in the dense matmuls, not in the input.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf
from keras import layers

parser = argparse.ArgumentParser()
parser.add_argument("--rows", type=int, default=49152)
parser.add_argument("--features", type=int, default=96)
parser.add_argument("--batch-size", type=int, default=1024)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

rng = np.random.default_rng(2024)
X = rng.normal(size=(args.rows, args.features)).astype(np.float32)
w_true = rng.normal(size=(args.features,)) / np.sqrt(args.features)
logit = X @ w_true + 0.5 * np.sin(X[:, 0] * X[:, 1]) - 1.2
y = (rng.random(args.rows) < 1 / (1 + np.exp(-logit))).astype(np.float32)
print(f"dataset: {X.shape}, default rate {y.mean():.3f}")

norm = layers.Normalization()
norm.adapt(X[:5000])


def build():
    inputs = keras.Input((args.features,))
    h = norm(inputs)
    for units in (1024, 1024, 512, 256):
        h = layers.Dense(units)(h)
        h = layers.BatchNormalization()(h)
        h = layers.Activation("relu")(h)
        h = layers.Dropout(0.1)(h)
    out = layers.Dense(1, activation="sigmoid")(h)
    m = keras.Model(inputs, out)
    m.compile(
        keras.optimizers.AdamW(1e-3, weight_decay=1e-4),
        "binary_crossentropy",
        metrics=[keras.metrics.AUC(name="auc")],
    )
    return m


def out_line(**kw):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            for k, v in kw.items():
                f.write(json.dumps({k: v}) + "\n")


class Clock(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.ts = []

    def on_train_batch_end(self, batch, logs=None):
        self.ts.append(time.perf_counter())


model = build()
steps_per_epoch = int(np.ceil(args.rows / args.batch_size))
start = time.perf_counter()
model.fit(X, y, batch_size=args.batch_size, epochs=args.epochs, verbose=2)
elapsed = time.perf_counter() - start
total_steps = steps_per_epoch * args.epochs
print(f"{total_steps} steps in {elapsed:.1f}s = {total_steps / elapsed:.2f} steps/s")
out_line(steps_per_second=total_steps / elapsed)

if args.truth:
    c_full = Clock()
    model.fit(X, y, batch_size=args.batch_size, epochs=args.epochs, verbose=0, callbacks=[c_full])
    xb, yb = X[: args.batch_size], y[: args.batch_size]
    one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    c_comp = Clock()
    model.fit(
        one, steps_per_epoch=steps_per_epoch, epochs=args.epochs, verbose=0, callbacks=[c_comp]
    )
    full = float(np.mean(np.diff(c_full.ts[5:])))
    comp = float(np.mean(np.diff(c_comp.ts[5:])))
    frac = min(1.0, max(0.0, (full - comp) / full))
    print(f"truth: full {full * 1e3:.2f}ms compute {comp * 1e3:.2f}ms input fraction {frac:.3f}")
    out_line(truth_input_fraction=frac)
