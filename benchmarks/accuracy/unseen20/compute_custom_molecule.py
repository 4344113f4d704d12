"""Molecular property regression from circular fingerprints with a custom training step."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_MOLECULES = 8192
FP_BITS = 2048
N_TASKS = 12
BATCH_SIZE = 128
EPOCHS = 3
STEPS_PER_EPOCH = 40


def make_data(rng):
    fps = (rng.random((N_MOLECULES, FP_BITS)) < 0.04).astype("float32")
    w = rng.standard_normal((FP_BITS, N_TASKS)).astype("float32") * 0.1
    y = np.tanh(fps @ w) + 0.05 * rng.standard_normal((N_MOLECULES, N_TASKS)).astype("float32")
    return fps, y.astype("float32")


class PropertyNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.blocks = [keras.layers.Dense(1536, activation="gelu") for _ in range(3)]
        self.norms = [keras.layers.LayerNormalization() for _ in range(3)]
        self.drop = keras.layers.Dropout(0.1)
        self.head = keras.layers.Dense(N_TASKS)
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def call(self, x, training=False):
        for dense, norm in zip(self.blocks, self.norms):
            x = self.drop(norm(dense(x)), training=training)
        return self.head(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            pred = self(x, training=True)
            loss = tf.reduce_mean(tf.square(pred - y))
        grads = tape.gradient(loss, self.trainable_variables)
        grads, _ = tf.clip_by_global_norm(grads, 1.0)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    @property
    def metrics(self):
        return [self.loss_tracker]


def build_model():
    model = PropertyNet()
    model.compile(optimizer=keras.optimizers.AdamW(3e-4, weight_decay=1e-4))
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.durations.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    fps, targets = make_data(np.random.default_rng(42))
    train_ds = (
        tf.data.Dataset.from_tensor_slices((fps, targets))
        .cache()
        .shuffle(N_MOLECULES, seed=0)
        .batch(BATCH_SIZE, drop_remainder=True)
        .repeat()
        .prefetch(tf.data.AUTOTUNE)
    )

    model = build_model()
    timer = StepTimer()
    model.fit(
        train_ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=2
    )
    full = timer.seconds_per_step()
    write_out({"steps_per_second": 1.0 / full})
    summary = f"full: {full * 1000:.1f} ms/step ({1.0 / full:.2f} steps/s)"

    if args.truth:
        batch = next(iter(train_ds))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(
            cached, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer2], verbose=2
        )
        compute = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_out({"truth_input_fraction": frac})
        summary += f", compute: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
