"""Structural biology: a cryo-EM particle picker that scores 64x64 micrograph
patches as particle / ice contamination / carbon edge / empty.

Patches are generated in memory (projected Gaussian density plus strong
shot noise). Because the cluster preempts jobs, a callback pickles the full
training state (model weights, optimizer slot variables, step counter) after
every batch, fsyncs it, copies the previous snapshot aside, atomically renames
the new one into place and exports .weights.h5 for the inference team; with a
wide dense head those snapshots dominate the run.
"""
import json
import os
import pickle
import shutil
import sys
import tempfile
import time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

N = 320
PATCH = 64
CLASSES = 4
BATCH = 16
EPOCHS = 2
STEPS = N // BATCH
SAVE_EVERY = 1


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_patches(rng):
    yy, xx = np.mgrid[0:PATCH, 0:PATCH].astype(np.float32) - PATCH / 2
    y = rng.integers(0, CLASSES, N)
    x = np.empty((N, PATCH, PATCH, 1), np.float32)
    for i in range(N):
        img = np.zeros((PATCH, PATCH), np.float32)
        if y[i] == 0:
            for _ in range(5):
                c = rng.normal(0, 5, 2)
                img += np.exp(-((yy - c[0]) ** 2 + (xx - c[1]) ** 2) / 30.0)
        elif y[i] == 1:
            img += 1.5 * np.exp(-((yy - rng.normal(0, 8)) ** 2 + (xx - rng.normal(0, 8)) ** 2) / 120.0)
        elif y[i] == 2:
            ang = rng.uniform(0, np.pi)
            img += 0.8 * ((np.cos(ang) * xx + np.sin(ang) * yy) > rng.normal(0, 6))
        x[i, :, :, 0] = img + rng.normal(0, 1.0, (PATCH, PATCH))
    return x, y


class TimedSnapshot(keras.callbacks.Callback):
    """Step timer and snapshot writer in one: each gap runs from the end of the
    previous batch's snapshot to the end of this batch, so the snapshot itself
    is not inside the timed gap."""

    def __init__(self, directory):
        super().__init__()
        self.dir = directory
        self.gaps, self._last = [], None
        self.saves, self.save_seconds, self.step = 0, 0.0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self.step += 1
        if self.step % SAVE_EVERY == 0:
            t0 = time.perf_counter()
            state = {"step": self.step,
                     "weights": [w.numpy() for w in self.model.weights],
                     "optimizer": [v.numpy() for v in self.model.optimizer.variables]}
            tmp = os.path.join(self.dir, "picker_state.pkl.tmp")
            with open(tmp, "wb") as f:
                pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL)
                f.flush()
                os.fsync(f.fileno())
            final = os.path.join(self.dir, "picker_state.pkl")
            if os.path.exists(final):  # keep the previous snapshot in case the new one is truncated
                prev = os.path.join(self.dir, "picker_state.prev.pkl")
                shutil.copyfile(final, prev)
                with open(prev, "rb+") as g:
                    os.fsync(g.fileno())
            os.replace(tmp, final)
            # inference team picks up the latest weights in Keras format
            self.model.save_weights(os.path.join(self.dir, "picker_latest.weights.h5"))
            self.saves += 1
            self.save_seconds += time.perf_counter() - t0
        self._last = time.perf_counter()

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def build_model():
    inp = keras.Input((PATCH, PATCH, 1))
    x = keras.layers.Conv2D(16, 5, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    out = keras.layers.Dense(CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def run(data, ckdir, steps=None):
    keras.utils.set_random_seed(0)
    model = build_model()
    cb = TimedSnapshot(ckdir)
    if steps is None:
        model.fit(data[0], data[1], batch_size=BATCH, epochs=EPOCHS, callbacks=[cb], verbose=2)
    else:
        model.fit(data, epochs=EPOCHS, steps_per_epoch=steps, callbacks=[cb], verbose=2)
    return cb


def main():
    rng = np.random.default_rng(55)
    tmp = tempfile.mkdtemp(prefix="u55_checkpoint_picklestate_batchcb_cryoem_")
    try:
        x, y = make_patches(rng)
        cb = run((x, y), tmp)
        full = cb.sec_per_step()
        wall = time.perf_counter() - T0
        size = os.path.getsize(os.path.join(tmp, "picker_state.pkl")) / 2 ** 20
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.1f ms/step, %d snapshots of %.0f MiB took %.1f s of %.1f s wall (%.0f%%)" % (
            full * 1e3, cb.saves, size, cb.save_seconds, wall, 100 * cb.save_seconds / wall)
        if "--truth" in sys.argv:
            ds = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
            comp = run(ds, tmp, steps=STEPS).sec_per_step()
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit({"truth_input_fraction": frac})
            msg += ", compute %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("checkpoint_picklestate_batchcb_cryoem:", msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
