"""Warranty-claim approval model with a TabNet-style sequential attention network.

Claim records (product, region and repair-history columns, already numeric) are
generated once as in-memory numpy arrays; a @tf.function GradientTape step in a
Python loop trains a TabNet-like model (shared and step-specific GLU feature
transformers, softmax attentive masks, six decision steps) on a large batch.
"""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 53
BATCH, STEPS = 512, 150
NFEAT, ND, NSTEPS_DEC = 96, 64, 6
N = 16384


def emit(key, val):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


class GLUBlock(keras.layers.Layer):
    def __init__(self, units, **kw):
        super().__init__(**kw)
        self.fc = keras.layers.Dense(2 * units, use_bias=False)
        self.bn = keras.layers.BatchNormalization(momentum=0.9)

    def call(self, x, training=False):
        h = self.bn(self.fc(x), training=training)
        a, g = tf.split(h, 2, axis=-1)
        return a * tf.sigmoid(g)


class TabNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.bn_in = keras.layers.BatchNormalization()
        self.shared = [GLUBlock(2 * ND), GLUBlock(2 * ND)]
        self.step_blocks = [[GLUBlock(2 * ND), GLUBlock(2 * ND)] for _ in range(NSTEPS_DEC + 1)]
        self.attn = [keras.layers.Dense(NFEAT, use_bias=False) for _ in range(NSTEPS_DEC)]
        self.attn_bn = [keras.layers.BatchNormalization() for _ in range(NSTEPS_DEC)]
        self.head = keras.layers.Dense(1)

    def transform(self, x, k, training):
        h = self.shared[0](x, training=training)
        h = (h + self.shared[1](h, training=training)) * 0.7071
        for blk in self.step_blocks[k]:
            h = (h + blk(h, training=training)) * 0.7071
        return h

    def call(self, x, training=False):
        x = self.bn_in(x, training=training)
        prior = tf.ones_like(x)
        h = self.transform(x, 0, training)
        att = h[:, ND:]
        out = 0.0
        for k in range(NSTEPS_DEC):
            mask = tf.nn.softmax(self.attn_bn[k](self.attn[k](att), training=training) * prior)
            prior = prior * (1.5 - mask)
            h = self.transform(x * mask, k + 1, training)
            out = out + tf.nn.relu(h[:, :ND])
            att = h[:, ND:]
        return self.head(out)


def train(batches):
    keras.utils.set_random_seed(SEED)
    model = TabNet()
    opt = keras.optimizers.Adam(2e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for s in range(STEPS):
        x, y = batches(s)
        loss = float(step(x, y))
        times.append(time.perf_counter())
    gaps = np.diff(times)
    return float(np.mean(gaps[5:])), loss


def main():
    tmp = tempfile.mkdtemp(prefix="u53_compute_tabnet_tapeloop_warrantyclaims_")
    try:
        rng = np.random.default_rng(SEED)
        X = rng.normal(size=(N, NFEAT)).astype(np.float32)
        w = rng.normal(size=NFEAT).astype(np.float32)
        Y = ((X @ w + 0.5 * X[:, 0] * X[:, 1]) > 0).astype(np.float32)[:, None]
        nb = N // BATCH
        full, loss = train(lambda s: (X[(s % nb) * BATCH:(s % nb + 1) * BATCH], Y[(s % nb) * BATCH:(s % nb + 1) * BATCH]))
        emit("steps_per_second", 1.0 / full)
        msg = f"full {full * 1000:.1f} ms/step, loss {loss:.3f}"
        if "--truth" in sys.argv:
            xb, yb = X[:BATCH].copy(), Y[:BATCH].copy()
            comp, _ = train(lambda s: (xb, yb))
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f", compute {comp * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(f"compute_tabnet_tapeloop_warrantyclaims: {N} claims in memory, {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
