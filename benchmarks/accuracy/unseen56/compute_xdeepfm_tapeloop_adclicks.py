"""Sponsored-search click prediction with xDeepFM (CIN + DNN).

Twenty-six hashed categorical fields per impression are generated once as an
in-memory NumPy array; the custom loop slices consecutive batches from it
and runs a @tf.function GradientTape step. The cost is the Compressed
Interaction Network: per layer an outer product of field embeddings,
compressed by a learned filter bank, alongside a plain DNN branch.
"""
import os
import sys
import json
import time
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 256
STEPS = 120
FIELDS = 26
VOCAB = 20000
DIM = 16
CIN_SIZES = [64, 64]
N = BATCH * 40


class CIN(keras.layers.Layer):
    def __init__(self, sizes, **kw):
        super().__init__(**kw)
        self.sizes = sizes

    def build(self, shape):
        m = shape[1]
        self.filters = []
        h_prev = m
        for i, h in enumerate(self.sizes):
            self.filters.append(self.add_weight(shape=(h_prev * m, h), initializer="glorot_uniform",
                                                name="cin_w%d" % i))
            h_prev = h

    def call(self, x0):
        # x0: (B, m, D)
        xs, pooled = x0, []
        b, m, d = tf.shape(x0)[0], x0.shape[1], x0.shape[2]
        for w in self.filters:
            z = tf.einsum("bhd,bmd->bhmd", xs, x0)
            z = tf.reshape(z, (b, -1, d))
            xs = tf.nn.relu(tf.einsum("bkd,kh->bhd", z, w))
            pooled.append(tf.reduce_sum(xs, -1))
        return tf.concat(pooled, -1)


class XDeepFM(keras.Model):
    def __init__(self):
        super().__init__()
        self.emb = keras.layers.Embedding(FIELDS * VOCAB, DIM)
        self.linear = keras.layers.Embedding(FIELDS * VOCAB, 1)
        self.cin = CIN(CIN_SIZES)
        self.dnn = keras.Sequential([keras.layers.Dense(400, activation="relu"),
                                     keras.layers.Dense(400, activation="relu")])
        self.out = keras.layers.Dense(1)

    def call(self, ids):
        ids = ids + tf.range(FIELDS)[None, :] * VOCAB
        e = self.emb(ids)
        lin = tf.reduce_sum(self.linear(ids), [1, 2])
        deep = self.dnn(tf.reshape(e, (-1, FIELDS * DIM)))
        logit = self.out(tf.concat([self.cin(e), deep], -1))[:, 0] + lin
        return logit


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_data(seed):
    rng = np.random.default_rng(seed)
    ids = (rng.zipf(1.2, (N, FIELDS)) % VOCAB).astype(np.int32)
    score = ((ids[:, 0] % 7 == ids[:, 3] % 7) + (ids[:, 5] < 10)).astype(np.float32)
    y = (score + rng.normal(0, 0.5, N) > 1).astype(np.float32)
    return ids, y


def run(next_batch):
    keras.utils.set_random_seed(29)
    model = XDeepFM()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(ids, y):
        with tf.GradientTape() as tape:
            logit = model(ids)
            loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logit))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps, loss = [], 0.0
    for i in range(STEPS):
        ids, y = next_batch(i)
        loss = float(step(ids, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u56_compute_xdeepfm_tapeloop_adclicks_")
    try:
        t0 = time.perf_counter()
        ids, y = make_data(4)
        nb = N // BATCH

        def sliced(i):
            j = (i % nb) * BATCH
            return ids[j:j + BATCH], y[j:j + BATCH]

        full, loss = run(sliced)
        report("steps_per_second", 1.0 / full)
        msg = "full %.1f ms/step loss %.4f" % (full * 1e3, loss)
        if truth:
            fixed = (ids[:BATCH], y[:BATCH])
            comp, _ = run(lambda i: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += " compute %.1f ms/step truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("compute_xdeepfm_tapeloop_adclicks: %s (%.1f s)" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
