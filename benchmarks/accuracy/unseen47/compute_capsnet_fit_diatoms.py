"""Phycology: classify diatom valves in light-microscopy crops with a capsule network.

Synthetic 32x32 diatom crops (elliptic or lanceolate valves with striae and
raphe, six genera) are generated as one in-memory numpy array; model.fit slices
them directly. The model is a CapsNet: conv stem, primary capsules and class
capsules with three rounds of dynamic routing, trained with the margin loss.
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import ops

SEED = 5147
CLASSES = 6
BATCH = 64
STEPS = 24
EPOCHS = 2
N = BATCH * STEPS


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def make_diatoms(rng):
    yy, xx = np.mgrid[-1:1:32j, -1:1:32j]
    labels = rng.integers(0, CLASSES, N)
    imgs = np.empty((N, 32, 32, 1), np.float32)
    for i, c in enumerate(labels):
        ang = rng.uniform(0, np.pi)
        u = xx * np.cos(ang) + yy * np.sin(ang)
        v = -xx * np.sin(ang) + yy * np.cos(ang)
        a, b = 0.8, 0.2 + 0.05 * c
        shape = (np.abs(u / a) ** (2 + c % 3) + np.abs(v / b) ** 2) < 1
        striae = 0.5 + 0.5 * np.cos(u * (18 + 4 * c))
        raphe = np.exp(-(v / 0.03) ** 2) * (c % 2)
        img = shape * (0.4 + 0.4 * striae) + raphe + rng.normal(0, 0.08, (32, 32))
        imgs[i, :, :, 0] = img
    return imgs, keras.utils.to_categorical(labels, CLASSES).astype(np.float32)


def squash(s, axis=-1):
    n2 = ops.sum(ops.square(s), axis=axis, keepdims=True)
    return n2 / (1.0 + n2) * s / ops.sqrt(n2 + 1e-7)


class ClassCaps(keras.layers.Layer):
    def __init__(self, n_caps, dim, routings=3, **kw):
        super().__init__(**kw)
        self.n_caps, self.dim, self.routings = n_caps, dim, routings

    def build(self, shape):
        self.n_in, self.d_in = shape[1], shape[2]
        self.W = self.add_weight(shape=(self.n_in, self.n_caps, self.dim, self.d_in),
                                 initializer="glorot_uniform", name="W")

    def call(self, u):
        u_hat = tf.einsum("ijdk,bik->bijd", self.W, u)
        logits = tf.zeros(tf.stack([tf.shape(u)[0], self.n_in, self.n_caps]))
        for r in range(self.routings):
            c = tf.nn.softmax(logits, axis=2)
            v = squash(tf.einsum("bij,bijd->bjd", c, u_hat))
            if r < self.routings - 1:
                logits = logits + tf.einsum("bijd,bjd->bij", u_hat, v)
        return v


def margin_loss(y_true, y_pred):
    return ops.mean(ops.sum(y_true * ops.square(ops.relu(0.9 - y_pred))
                            + 0.5 * (1 - y_true) * ops.square(ops.relu(y_pred - 0.1)), axis=1))


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((32, 32, 1))
    x = keras.layers.Conv2D(128, 9, activation="relu")(inp)
    x = keras.layers.Conv2D(16 * 8, 9, strides=2)(x)
    x = keras.layers.Reshape((-1, 8))(x)
    x = keras.layers.Lambda(squash)(x)
    v = ClassCaps(CLASSES, 16)(x)
    out = keras.layers.Lambda(lambda t: ops.sqrt(ops.sum(ops.square(t), -1) + 1e-7))(v)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss=margin_loss, metrics=["accuracy"])
    return m


def train(data, **kw):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(*data, epochs=EPOCHS, callbacks=[timer], verbose=0, **kw)
    return timer.sec_per_step(), hist.history["accuracy"][-1]


def main():
    t0 = time.perf_counter()
    x, y = make_diatoms(np.random.default_rng(SEED))
    sps, acc = train((x, y), batch_size=BATCH, shuffle=True)
    emit({"steps_per_second": 1.0 / sps})
    msg = ""
    if "--truth" in sys.argv:
        one = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        csps, _ = train((one,), steps_per_epoch=STEPS)
        frac = min(max((sps - csps) / sps, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg = " compute %.4fs/step truth_input_fraction %.3f" % (csps, frac)
    print("capsnet diatoms: acc %.3f full %.4fs/step%s wall %.1fs"
          % (acc, sps, msg, time.perf_counter() - t0))


if __name__ == "__main__":
    main()
