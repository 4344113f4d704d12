"""Digit-style classifier: a quick fit, then a long evaluation.

After one short epoch on in-memory data the model is evaluated on a large
held-out set and predictions are made with test-time augmentation
(original + shifted copies), which is where most of the time goes.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

BATCH = 64
TRAIN_STEPS = 60


def fake_digits(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 10, n)
    x = rng.random((n, 28, 28, 1), dtype=np.float32) * 0.2
    for c in range(10):
        m = y == c
        x[m, 4 + 2 * c : 8 + 2 * c, 6:22, 0] += 0.8
        x[m, 6:22, 4 + 2 * c : 6 + 2 * c, 0] += 0.5
    return x, y


def model_fn():
    m = keras.Sequential(
        [
            keras.Input((28, 28, 1)),
            keras.layers.Conv2D(32, 3, activation="relu"),
            keras.layers.Conv2D(64, 3, activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Flatten(),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(10, activation="softmax"),
        ]
    )
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.steps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.steps.append(now - self.last)
        self.last = now


def append(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(obj) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    x_tr, y_tr = fake_digits(BATCH * TRAIN_STEPS, 0)
    x_te, y_te = fake_digits(16000, 1)
    model = model_fn()

    timer = StepTimer()
    t0 = time.perf_counter()
    model.fit(x_tr, y_tr, batch_size=BATCH, epochs=1, callbacks=[timer], verbose=2)
    t_fit = time.perf_counter() - t0

    t0 = time.perf_counter()
    loss, acc = model.evaluate(x_te, y_te, batch_size=32, verbose=0)
    probs = np.zeros((len(x_te), 10), dtype=np.float32)
    for shift in (0, 1, -1, 2):
        probs += model.predict(np.roll(x_te, shift, axis=2), batch_size=32, verbose=0)
    tta_acc = float((probs.argmax(1) == y_te).mean())
    t_eval = time.perf_counter() - t0
    print(f"test loss {loss:.4f} acc {acc:.4f} | TTA acc {tta_acc:.4f}")
    print(f"fit {t_fit:.1f}s, evaluate+predict {t_eval:.1f}s")

    steady = timer.steps[5:]
    full = float(np.mean(steady))
    sps = len(steady) / float(np.sum(steady))
    print(f"training speed {sps:.1f} steps/s")
    append({"steps_per_second": sps})

    if args.truth:
        one = tf.data.Dataset.from_tensors((x_tr[:BATCH], y_tr[:BATCH])).repeat()
        t2 = StepTimer()
        model.fit(one, steps_per_epoch=TRAIN_STEPS, epochs=1, callbacks=[t2], verbose=0)
        compute = float(np.mean(t2.steps[5:]))
        frac = min(1.0, max(0.0, (full - compute) / full))
        print(
            f"truth input fraction of train step: {frac:.3f} ({full * 1e3:.2f} / {compute * 1e3:.2f} ms)"
        )
        append({"truth_input_fraction": frac})


if __name__ == "__main__":
    main()
