"""Insurance quote conversion: a synthetic table of quotes (categorical vehicle/region/
channel codes plus numeric premium, age and claims history) is encoded once into
in-memory tensors, and a Deep & Cross Network v2 (embeddings, four full-rank cross
layers, a wide deep tower) is trained with a custom @tf.function GradientTape loop.
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 1024
STEPS = 150
N_ROWS = 40_000
CARD = [400, 60, 12, 30, 8, 150]
EMB = 32
NUM = 16


class Cross(keras.layers.Layer):
    def build(self, shape):
        d = shape[0][-1]
        self.w = self.add_weight(shape=(d, d), initializer="glorot_uniform")
        self.b = self.add_weight(shape=(d,), initializer="zeros")

    def call(self, inputs):
        x0, x = inputs
        return x0 * (tf.matmul(x, self.w) + self.b) + x


def build_model():
    cats = keras.Input((len(CARD),), dtype="int32")
    nums = keras.Input((NUM,))
    embs = [keras.layers.Embedding(c, EMB)(cats[:, i]) for i, c in enumerate(CARD)]
    x0 = keras.layers.Concatenate()(embs + [nums])
    x = x0
    for _ in range(4):
        x = Cross()([x0, x])
    d = x0
    for units in (1024, 1024, 512):
        d = keras.layers.Dense(units, activation="relu")(d)
    out = keras.layers.Dense(1)(keras.layers.Concatenate()([x, d]))
    return keras.Model([cats, nums], out)


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def train(model, get_batch):
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def step(c, n, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model([c, n], training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times, loss = [], 0.0
    for i in range(STEPS):
        c, n, y = get_batch(i)
        loss = float(step(c, n, y))
        times.append(time.perf_counter())
    return float(np.diff(times)[5:].mean()), loss


def main():
    rng = np.random.default_rng(51)
    cats = np.stack([rng.integers(0, c, N_ROWS) for c in CARD], 1).astype(np.int32)
    nums = rng.normal(0, 1, (N_ROWS, NUM)).astype(np.float32)
    logit = 0.8 * nums[:, 0] - 0.5 * nums[:, 1] * nums[:, 2] + 0.3 * (cats[:, 2] % 3) - 0.2
    y = (rng.random(N_ROWS) < 1 / (1 + np.exp(-logit))).astype(np.float32)[:, None]
    C, N, Y = tf.constant(cats), tf.constant(nums), tf.constant(y)
    nb = N_ROWS // BATCH

    def sliced(i):
        s = (i % nb) * BATCH
        return C[s:s + BATCH], N[s:s + BATCH], Y[s:s + BATCH]

    tf.random.set_seed(51)
    t0 = time.perf_counter()
    full, loss = train(build_model(), sliced)
    emit({"steps_per_second": 1.0 / full})
    if "--truth" in sys.argv:
        one = sliced(0)
        tf.random.set_seed(51)
        comp, _ = train(build_model(), lambda i: one)
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"truth: full={full*1000:.1f}ms compute={comp*1000:.1f}ms input_fraction={frac:.2f}")
    print(f"dcn-v2 quote model: {STEPS} steps, {1.0/full:.1f} steps/s, final loss {loss:.4f}, "
          f"train {time.perf_counter()-t0:.1f}s")


if __name__ == "__main__":
    main()
