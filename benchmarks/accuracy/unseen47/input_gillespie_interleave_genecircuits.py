"""Systems biology: identify the gene-regulatory circuit behind noisy expression traces.

Each training example is a fresh stochastic simulation (Gillespie SSA, pure
Python) of one of four two-species circuits: birth-death, negative
autoregulation, toggle switch or telegraph bursting. Four from_generator
pipelines, one per circuit family, are interleaved in tf.data; each trajectory
is resampled onto a regular time grid and log-scaled before model.fit trains a
Conv1D classifier.
"""
import json
import math
import os
import random
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 3147
T_END = 60.0
GRID = 256
BATCH = 32
STEPS = 70
EPOCHS = 3


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


def propensities(kind, a, b, p, g):
    if kind == 0:   # birth-death of mRNA a, translation to protein b
        return [p[0], p[1] * a, p[2] * a, p[3] * b]
    if kind == 1:   # negative autoregulation
        return [p[0] / (1.0 + (b / p[4]) ** 2), p[1] * a, p[2] * a, p[3] * b]
    if kind == 2:   # toggle switch: a and b repress each other
        return [p[0] / (1.0 + (b / p[4]) ** 2), p[1] * a, p[0] / (1.0 + (a / p[4]) ** 2), p[1] * b]
    # telegraph: promoter g switches on/off, bursts of a, translation to b
    return [p[0] * 3.0 * g, p[1] * a, p[2] * a, p[3] * b]


STOICH = {0: [(1, 0), (-1, 0), (0, 1), (0, -1)], 1: [(1, 0), (-1, 0), (0, 1), (0, -1)],
          2: [(1, 0), (-1, 0), (0, 1), (0, -1)], 3: [(1, 0), (-1, 0), (0, 1), (0, -1)]}


def ssa(kind, rnd):
    p = [rnd.uniform(4, 8), rnd.uniform(0.4, 0.8), rnd.uniform(0.5, 1.5),
         rnd.uniform(0.3, 0.6), rnd.uniform(3, 8)]
    a, b, g, t = 0, 0, 1, 0.0
    times, sa, sb = [0.0], [0], [0]
    while t < T_END:
        if kind == 3 and rnd.random() < 0.02:
            g = 1 - g
        props = propensities(kind, a, b, p, g)
        total = sum(props)
        if total <= 0:
            break
        t += -math.log(1.0 - rnd.random()) / total
        r, acc, k = rnd.random() * total, 0.0, 0
        for k, pr in enumerate(props):
            acc += pr
            if r < acc:
                break
        da, db = STOICH[kind][k]
        a, b = a + da, b + db
        times.append(t)
        sa.append(a)
        sb.append(b)
    grid = np.linspace(0, T_END, GRID)
    idx = np.clip(np.searchsorted(np.array(times), grid, side="right") - 1, 0, len(times) - 1)
    x = np.stack([np.array(sa)[idx], np.array(sb)[idx]], -1).astype(np.float32)
    x = np.log1p(x)
    dx = np.diff(x, axis=0, prepend=x[:1])
    return np.concatenate([x, dx], -1)


def circuit_gen(kind):
    kind = int(kind)
    rnd = random.Random(SEED * 10 + kind)
    while True:
        yield ssa(kind, rnd), kind


def make_dataset():
    sig = (tf.TensorSpec((GRID, 4), tf.float32), tf.TensorSpec((), tf.int64))
    ds = tf.data.Dataset.range(4).interleave(
        lambda k: tf.data.Dataset.from_generator(circuit_gen, args=(k,), output_signature=sig),
        cycle_length=4, block_length=1)
    return ds.batch(BATCH).prefetch(1)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((GRID, 4))
    x = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(inp)
    for _ in range(3):
        h = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(x)
        h = keras.layers.Conv1D(48, 5, padding="same")(h)
        x = keras.layers.Activation("relu")(keras.layers.Add()([x, h]))
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(4, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history["accuracy"][-1]


def main():
    t0 = time.perf_counter()
    sps, acc = train(make_dataset())
    emit({"steps_per_second": 1.0 / sps})
    msg = ""
    if "--truth" in sys.argv:
        batch = next(iter(make_dataset()))
        csps, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((sps - csps) / sps, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg = " compute %.4fs/step truth_input_fraction %.3f" % (csps, frac)
    print("gillespie circuits: acc %.3f full %.4fs/step%s wall %.1fs"
          % (acc, sps, msg, time.perf_counter() - t0))


if __name__ == "__main__":
    main()
