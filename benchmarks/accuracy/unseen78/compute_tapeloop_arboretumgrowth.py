import time
T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(gaps))


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

# Arboretum growth modelling: annual girth/height series for catalogued trees
# are pre-converted to tensors once; a custom GradientTape loop trains a wide
# residual MLP regressor. Batches are precomputed tensors, so compute dominates.
BATCH = 128
STEPS = 380
N_TREES = 8192
FEAT = 256
WIDTH = 1024

rng = np.random.default_rng(78)
X = rng.normal(size=(N_TREES, FEAT)).astype(np.float32)
Y = (X[:, :8].sum(1, keepdims=True) * 0.3).astype(np.float32)
BATCHES = [(tf.constant(X[i:i + BATCH]), tf.constant(Y[i:i + BATCH])) for i in range(0, N_TREES, BATCH)]


def build():
    inp = keras.Input((FEAT,))
    h = keras.layers.Dense(WIDTH, activation="relu")(inp)
    for _ in range(3):
        h = keras.layers.Add()([h, keras.layers.Dense(WIDTH, activation="relu")(h)])
    return keras.Model(inp, keras.layers.Dense(1)(h))


def run(batch_at):
    keras.utils.set_random_seed(78)
    model = build()
    opt = keras.optimizers.Adam(1e-4)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for k in range(STEPS):
        x, y = batch_at(k)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:]))


full = run(lambda k: BATCHES[k % len(BATCHES)])
emit({"steps_per_second": 1.0 / full})
print(f"[compute_tapeloop_arboretumgrowth] full {full*1000:.1f} ms/step, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    one = BATCHES[0]
    comp = run(lambda k: one)
    f = input_fraction(full, comp)
    emit({"truth_input_fraction": f})
    print(f"[compute_tapeloop_arboretumgrowth] truth: compute {comp*1000:.1f} ms/step, input fraction {f:.3f}")
