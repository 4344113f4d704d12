"""Activity recognition from fused wrist IMU + barometer windows (6 classes).
All windows are synthesised up front into in-memory numpy arrays; each step slices a
pre-shuffled batch from those arrays. The model is a gMLP (gated MLP with spatial gating
units mixing along the time axis) trained with a @tf.function GradientTape step in a Python loop.
"""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 50
N = 4096
SEQ = 64
CH = 10
D = 128
FFN = 256
BLOCKS = 4
BATCH = 32
STEPS = 250


def emit(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


def make_data(rng):
    y = rng.integers(0, 6, N).astype(np.int32)
    t = np.arange(SEQ) / 50.0
    freq = 0.5 + 0.6 * y[:, None, None]
    phase = rng.uniform(0, 6.28, (N, 1, CH))
    x = np.sin(2 * np.pi * freq * t[None, :, None] + phase) * (0.5 + 0.1 * y[:, None, None])
    x += 0.3 * rng.standard_normal((N, SEQ, CH))
    return x.astype(np.float32), y


class SpatialGatingUnit(keras.layers.Layer):
    def __init__(self, seq_len, **kw):
        super().__init__(**kw)
        self.norm = keras.layers.LayerNormalization()
        self.proj = keras.layers.Dense(seq_len, bias_initializer="ones")

    def call(self, x):
        u, v = tf.split(x, 2, axis=-1)
        v = self.norm(v)
        v = tf.transpose(v, [0, 2, 1])
        v = self.proj(v)
        v = tf.transpose(v, [0, 2, 1])
        return u * v


def gmlp_block(x):
    shortcut = x
    x = keras.layers.LayerNormalization()(x)
    x = keras.layers.Dense(FFN, activation="gelu")(x)
    x = SpatialGatingUnit(SEQ)(x)
    x = keras.layers.Dense(D)(x)
    return keras.layers.Add()([shortcut, x])


def make_model():
    inp = keras.Input((SEQ, CH))
    x = keras.layers.Dense(D)(inp)
    for _ in range(BLOCKS):
        x = gmlp_block(x)
    x = keras.layers.LayerNormalization()(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(6)(x)
    return keras.Model(inp, out)


def train(model, next_batch):
    opt = keras.optimizers.Adam(5e-4)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps, loss = [], float("nan")
    for i in range(STEPS):
        x, y = next_batch(i)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    truth = "--truth" in sys.argv
    keras.utils.set_random_seed(SEED)
    tmp = tempfile.mkdtemp(prefix="u50_compute_gmlp_tapeloop_sensorfusion_")
    try:
        x, y = make_data(np.random.default_rng(SEED))
        perm = np.random.default_rng(SEED + 1).permutation(N)

        def next_batch(i):
            j = perm[(i * BATCH) % N:(i * BATCH) % N + BATCH]
            return x[j], y[j]

        model = make_model()
        full, loss = train(model, next_batch)
        emit({"steps_per_second": 1.0 / full})
        msg = f"loss={loss:.4f} s/step={full:.4f}"
        if truth:
            xb, yb = next_batch(0)
            comp, _ = train(make_model(), lambda i: (xb, yb))
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f" compute_s/step={comp:.4f} truth_input_fraction={frac:.3f}"
        print(f"compute_gmlp_tapeloop_sensorfusion: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
