"""Turbulence closure surrogate: deep residual MLP with a custom XLA-compiled train_step."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_SAMPLES = 16384
N_INPUTS = 64
N_OUTPUTS = 16
WIDTH = 768
DEPTH = 6
BATCH_SIZE = 512
EPOCHS = 3

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


# ---------------- data ----------------
rng = np.random.default_rng(1)
grad_u = rng.normal(size=(N_SAMPLES, N_INPUTS)).astype(np.float32)
W_true = rng.normal(size=(N_INPUTS, N_OUTPUTS)).astype(np.float32) / 8
stress = np.tanh(grad_u @ W_true) + 0.1 * (grad_u[:, :N_OUTPUTS] ** 2)

dataset = (
    tf.data.Dataset.from_tensor_slices((grad_u, stress.astype(np.float32)))
    .shuffle(N_SAMPLES)
    .batch(BATCH_SIZE, drop_remainder=True)
    .cache()
    .prefetch(tf.data.AUTOTUNE)
)
STEPS_PER_EPOCH = N_SAMPLES // BATCH_SIZE


# ---------------- model ----------------
class ClosureNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.inp = keras.layers.Dense(WIDTH, activation="gelu")
        self.blocks = [
            (keras.layers.Dense(WIDTH, activation="gelu"), keras.layers.LayerNormalization())
            for _ in range(DEPTH)
        ]
        self.out = keras.layers.Dense(N_OUTPUTS)
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def call(self, x, training=False):
        h = self.inp(x)
        for dense, norm in self.blocks:
            h = norm(h + dense(h))
        return self.out(h)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            pred = self(x, training=True)
            loss = tf.reduce_mean(tf.square(pred - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    @property
    def metrics(self):
        return [self.loss_tracker]


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())

    def seconds_per_step(self):
        return (self.times[-1] - self.times[5]) / (len(self.times) - 6)


def train(ds, tag):
    model = ClosureNet()
    model.compile(optimizer=keras.optimizers.Adam(3e-4), jit_compile=True)
    timer = StepTimer()
    print(f"[{tag}] training")
    model.fit(ds, steps_per_epoch=STEPS_PER_EPOCH, epochs=EPOCHS, callbacks=[timer], verbose=2)
    return timer.seconds_per_step()


full = train(dataset.repeat(), "closure")
write_out({"steps_per_second": 1.0 / full})

if args.truth:
    batch = next(iter(dataset))
    cached = tf.data.Dataset.from_tensors(batch).repeat()
    compute = train(cached, "cached")
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    print(f"full={full:.4f}s/step compute={compute:.4f}s/step input_fraction={frac:.3f}")
else:
    print(f"done: {1.0 / full:.2f} steps/s ({full:.4f} s/step)")
