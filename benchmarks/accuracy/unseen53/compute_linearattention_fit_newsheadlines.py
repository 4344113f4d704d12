"""News-headline topic model with a linear-attention (kernelised) transformer.

Token-id sequences for headlines-with-lede are generated in memory as numpy
arrays and fed to model.fit straight from memory; every step is dominated by
the model math of four linear-attention blocks (elu+1 feature maps) with
feed-forward layers.
"""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 53
BATCH, STEPS, EPOCHS = 32, 100, 2
SEQ, VOCAB, NCLS, D, HEADS, BLOCKS = 128, 8000, 8, 64, 4, 3
N = 2048


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self._last = None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(key, val):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


class LinearAttention(keras.layers.Layer):
    def __init__(self, dim, heads, **kw):
        super().__init__(**kw)
        self.dim, self.heads = dim, heads
        self.qkv = keras.layers.Dense(3 * dim)
        self.proj = keras.layers.Dense(dim)

    def call(self, x):
        b, n = tf.shape(x)[0], tf.shape(x)[1]
        qkv = tf.reshape(self.qkv(x), (b, n, 3, self.heads, self.dim // self.heads))
        q, k, v = tf.unstack(tf.transpose(qkv, (2, 0, 3, 1, 4)))
        q, k = tf.nn.elu(q) + 1.0, tf.nn.elu(k) + 1.0
        kv = tf.einsum("bhnd,bhne->bhde", k, v)
        z = 1.0 / (tf.einsum("bhnd,bhd->bhn", q, tf.reduce_sum(k, axis=2)) + 1e-6)
        out = tf.einsum("bhnd,bhde,bhn->bhne", q, kv, z)
        out = tf.reshape(tf.transpose(out, (0, 2, 1, 3)), (b, n, self.dim))
        return self.proj(out)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SEQ,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, D)(inp)
    for _ in range(BLOCKS):
        x = keras.layers.LayerNormalization()(x + LinearAttention(D, HEADS)(x))
        h = keras.layers.Dense(4 * D, activation="gelu")(x)
        x = keras.layers.LayerNormalization()(x + keras.layers.Dense(D)(h))
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(NCLS, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    tmp = tempfile.mkdtemp(prefix="u53_compute_linearattention_fit_newsheadlines_")
    try:
        rng = np.random.default_rng(SEED)
        y = rng.integers(0, NCLS, N).astype(np.int32)
        x = rng.integers(1, VOCAB, (N, SEQ)).astype(np.int32)
        x[:, :8] = (y[:, None] * 100 + np.arange(8)) % VOCAB + 1
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=SEED).repeat().batch(BATCH).prefetch(2)
        full = train(ds)
        emit("steps_per_second", 1.0 / full)
        msg = f"full {full * 1000:.1f} ms/step"
        if "--truth" in sys.argv:
            batch = next(iter(ds))
            comp = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f", compute {comp * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(f"compute_linearattention_fit_newsheadlines: {N} headlines in memory, {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
