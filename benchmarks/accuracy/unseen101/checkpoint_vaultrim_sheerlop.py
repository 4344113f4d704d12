import time; T0 = time.perf_counter()
"""Vault-door bolt-work model that checkpoints the full model every few batches.

A callback calls model.save(...keras) every SAVE_EVERY training batches into a
temporary directory, so serialising the model dominates the run.
"""
import os, sys, json, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
SEED = 1020
BATCH = 16
N = 16 * 160
EPOCHS = 3
SAVE_EVERY = 2
FEATS = 160


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


class FrequentSaver(keras.callbacks.Callback):
    def __init__(self, folder):
        super().__init__()
        self.folder, self.seconds, self.count = folder, 0.0, 0

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % SAVE_EVERY == 0:
            t = time.perf_counter()
            self.model.save(os.path.join(self.folder, "boltwork_latest.keras"))
            self.seconds += time.perf_counter() - t
            self.count += 1


rs = np.random.RandomState(SEED)
x = rs.normal(0, 1, (N, FEATS)).astype(np.float32)
y = (x[:, :8].sum(axis=1, keepdims=True) * 0.3 + rs.normal(0, 0.1, (N, 1))).astype(np.float32)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return m


tmp = tempfile.mkdtemp(prefix="u101_checkpoint_vaultrim_sheerlop_")
try:
    model = build_model()
    timer, saver = StepTimer(), FrequentSaver(tmp)
    model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, saver], verbose=0)
    full = timer.sec_per_step()
    wall = time.perf_counter() - T0
    emit({"steps_per_second": 1.0 / full})
    msg = (f"checkpoint_vaultrim_sheerlop: {1.0/full:.2f} steps/s, {saver.count} saves "
           f"{saver.seconds:.1f}s = {saver.seconds/wall:.0%} of wall {wall:.1f}s")

    if TRUTH:
        batch = (x[:BATCH], y[:BATCH])
        model = build_model()
        timer, saver = StepTimer(), FrequentSaver(tmp)
        model.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
                  steps_per_epoch=N // BATCH, callbacks=[timer, saver], verbose=0)
        compute = timer.sec_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute {1.0/compute:.2f} steps/s, truth_input_fraction {frac:.3f}"
    print(msg)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
