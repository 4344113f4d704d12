"""Education: tag lecture-caption segments by topic with a small transformer
(compute-bound custom loop).

Data path: 1024 token sequences (length 64) generated once with numpy and
converted to tensors up front; a custom tf.GradientTape loop with a
tf.function train step slices ready-made batches from those tensors.
Bottleneck: model compute (two transformer blocks, d_model 64).
"""
import time
WALL0 = time.perf_counter()
import json, os, sys
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, SEQ, VOCAB, N, D = 32, 150, 64, 4000, 1024, 64


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_data():
    rng = np.random.default_rng(59)
    y = rng.integers(0, 8, N).astype(np.int32)
    x = rng.integers(1, VOCAB, (N, SEQ)).astype(np.int32)
    x[:, ::7] = (y[:, None] * 311 + 17) % VOCAB  # topic keyword every 7 tokens
    xs = [tf.constant(x[i:i + BATCH]) for i in range(0, N, BATCH)]
    ys = [tf.constant(y[i:i + BATCH]) for i in range(0, N, BATCH)]
    return xs, ys


def block(x, heads=4, dim=D):
    L = keras.layers
    a = L.MultiHeadAttention(heads, dim // heads)(x, x)
    x = L.LayerNormalization()(x + a)
    f = L.Dense(dim * 4, activation="gelu")(x)
    return L.LayerNormalization()(x + L.Dense(dim)(f))


def build():
    keras.utils.set_random_seed(59)
    inp = keras.Input((SEQ,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, D)(inp)
    x = block(block(x))
    out = keras.layers.Dense(8)(keras.layers.GlobalAveragePooling1D()(x))
    return keras.Model(inp, out)


def train(get_batch):
    model = build()
    opt = keras.optimizers.Adam(3e-4)
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    stamps = []
    for i in range(STEPS):
        x, y = get_batch(i)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    xs, ys = make_data()
    full, loss = train(lambda i: (xs[i % len(xs)], ys[i % len(ys)]))
    emit({"steps_per_second": 1.0 / full})
    print("compute_tapeloop_transformer_lecture_captions: %.4f s/step (%.1f steps/s), loss %.3f, wall %.1f s" % (full, 1 / full, loss, time.perf_counter() - WALL0))
    if "--truth" in sys.argv:
        x, y = xs[0], ys[0]
        comp, _ = train(lambda i: (x, y))
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("truth: full %.4f compute %.4f input fraction %.3f" % (full, comp, frac))


if __name__ == "__main__":
    main()
