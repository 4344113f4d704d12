"""Fault detection on a distributed acoustic sensor (fibre) array.

Each example is a 128-channel x 24-feature snapshot of a pipeline's fibre
sensing array, generated in memory as numpy arrays. model.fit trains a
Perceiver-style network on them: a small learned latent array cross-attends to
the 256 sensor tokens and is refined by latent self-attention blocks, so the
step time is all attention math.
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

SEED = 42
N = 1024
TOKENS = 128
FEAT = 24
LATENTS = 32
DIM = 64
BATCH = 32
EPOCHS = 2
CLASSES = 6


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
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
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


class LatentArray(keras.layers.Layer):
    """Learned latent queries, tiled over the batch."""

    def build(self, input_shape):
        self.latents = self.add_weight(shape=(LATENTS, DIM), initializer="random_normal",
                                       name="latents")

    def call(self, x):
        b = keras.ops.shape(x)[0]
        return keras.ops.broadcast_to(self.latents[None], (b, LATENTS, DIM))


def attention_block(q, kv, heads):
    h = keras.layers.LayerNormalization()(q)
    kvn = keras.layers.LayerNormalization()(kv) if kv is not q else h
    a = keras.layers.MultiHeadAttention(heads, DIM // heads)(h, kvn)
    q = keras.layers.Add()([q, a])
    h = keras.layers.LayerNormalization()(q)
    h = keras.layers.Dense(DIM * 4, activation="gelu")(h)
    h = keras.layers.Dense(DIM)(h)
    return keras.layers.Add()([q, h])


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((TOKENS, FEAT))
    pos = keras.layers.Embedding(TOKENS, DIM)(keras.ops.arange(TOKENS)[None])
    tokens = keras.layers.Add()([keras.layers.Dense(DIM)(inp), pos])
    lat = LatentArray()(inp)
    for _ in range(1):
        lat = attention_block(lat, tokens, heads=1)
        for _ in range(3):
            lat = attention_block(lat, lat, heads=4)
    x = keras.layers.GlobalAveragePooling1D()(keras.layers.LayerNormalization()(lat))
    out = keras.layers.Dense(CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.AdamW(3e-4),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def make_data(rng):
    y = rng.integers(0, CLASSES, N).astype(np.int32)
    x = rng.standard_normal((N, TOKENS, FEAT)).astype(np.float32)
    where = rng.integers(0, TOKENS - 16, N)
    for i in range(N):
        x[i, where[i]:where[i] + 16, y[i] % FEAT] += 2.0 + y[i]
    return x, y


def main():
    truth = "--truth" in sys.argv
    x, y = make_data(np.random.default_rng(SEED))
    steps = N // BATCH

    model = build_model()
    timer = StepTimer()
    hist = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer],
                     shuffle=True, verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = "fibre-perceiver: %.1f ms/step loss=%.3f" % (full * 1e3, hist.history["loss"][-1])
    if truth:
        batch = (tf.constant(x[:BATCH]), tf.constant(y[:BATCH]))
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
                   steps_per_epoch=steps, callbacks=[timer2], verbose=0)
        compute = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        msg += " compute=%.1f ms/step truth_input_fraction=%.3f" % (compute * 1e3, frac)
    print(msg)


if __name__ == "__main__":
    main()
