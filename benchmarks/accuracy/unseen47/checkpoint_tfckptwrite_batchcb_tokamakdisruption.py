"""Fusion plasma physics: predict tokamak disruptions from multichannel diagnostics.

Synthetic 200-sample windows of 16 diagnostic channels (magnetics, bolometry,
density, locked-mode amplitude) are generated in memory with a precursor
signature before disruptions; model.fit trains a Conv1D + dense-head
classifier. A callback writes a full tf.train.Checkpoint (model and Adam slots)
after every batch so a preempted job on the shared cluster can resume, and
refreshes a .weights.h5 copy for the online-inference service.
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

SEED = 9147
T, C = 200, 16
BATCH = 16
STEPS = 40
EPOCHS = 2
SAVE_EVERY = 1


class Head(keras.callbacks.Callback):
    """First callback: marks the end of the train step itself."""
    def __init__(self, tail):
        super().__init__()
        self.tail, self.gaps = tail, []

    def on_epoch_begin(self, epoch, logs=None):
        self.tail.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.tail.last is not None:
            self.gaps.append(t - self.tail.last)

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


class Tail(keras.callbacks.Callback):
    """Last callback: marks the end of all callbacks (saves included)."""
    def __init__(self):
        super().__init__()
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        self.last = time.perf_counter()


class CheckpointWriter(keras.callbacks.Callback):
    def __init__(self, directory):
        super().__init__()
        self.directory, self.count, self.seconds, self.ckpt = directory, 0, 0.0, None

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % SAVE_EVERY:
            return
        t = time.perf_counter()
        if self.ckpt is None:
            self.ckpt = tf.train.Checkpoint(model=self.model, optimizer=self.model.optimizer)
        self.ckpt.write(os.path.join(self.directory, "disrupt-latest"))
        self.model.save_weights(os.path.join(self.directory, "serving-latest.weights.h5"))
        self.count += 1
        self.seconds += time.perf_counter() - t


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def make_shots(rng, n):
    t = np.linspace(0, 1, T)
    y = (rng.random(n) < 0.3).astype(np.float32)
    x = rng.normal(0, 0.3, (n, T, C)).astype(np.float32)
    x += np.sin(2 * np.pi * rng.uniform(2, 8, (n, 1, C)) * t[None, :, None]).astype(np.float32)
    onset = rng.uniform(0.5, 0.8, n)
    for i in np.where(y > 0)[0]:
        ramp = np.clip((t - onset[i]) / 0.2, 0, None) ** 2
        x[i, :, 3] += 3 * ramp
        x[i, :, 7] -= 2 * ramp
    return x, y[:, None]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((T, C))
    x = keras.layers.Conv1D(64, 7, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(64, 7, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(2048, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(3e-4), loss="binary_crossentropy", metrics=["accuracy"])
    return m


def train(data, ckdir, **kw):
    model = build_model()
    tail = Tail()
    head = Head(tail)
    saver = CheckpointWriter(ckdir)
    hist = model.fit(*data, epochs=EPOCHS, callbacks=[head, saver, tail], verbose=0, **kw)
    return head.sec_per_step(), saver, hist.history["accuracy"][-1]


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u47_checkpoint_tfckptwrite_batchcb_tokamakdisruption_")
    try:
        x, y = make_shots(np.random.default_rng(SEED), BATCH * STEPS)
        sps, saver, acc = train((x, y), os.path.join(tmp, "run"), batch_size=BATCH)
        emit({"steps_per_second": 1.0 / sps})
        msg = ""
        if "--truth" in sys.argv:
            one = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
            csps, _, _ = train((one,), os.path.join(tmp, "truth"), steps_per_epoch=STEPS)
            frac = min(max((sps - csps) / sps, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg = " compute %.4fs/step truth_input_fraction %.3f" % (csps, frac)
        wall = time.perf_counter() - t0
        print("tokamak disruption: acc %.3f full %.4fs/step%s saves %d took %.1fs of %.1fs"
              % (acc, sps, msg, saver.count, saver.seconds, wall))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
