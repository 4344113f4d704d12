"""Dam-foundation seepage regressor from piezometer arrays plus a frozen, pretrained
per-station site-condition embedding table (large, non-trainable): a batch callback writes a
tf.train.CheckpointManager checkpoint (model incl. the frozen table + Adam state) every batch."""
import time
WALL0 = time.perf_counter()
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    use = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(use))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

PIEZO = 96
BATCH = 8
STEPS = 50
EPOCHS = 3
SAVE_EVERY = 1
N_OBS = 2048
STATIONS = 350000
SITE_DIM = 64


def make_piezometers(n, seed=81):
    rng = np.random.default_rng(seed)
    head = rng.uniform(20, 60, (n, 1)).astype(np.float32)
    pos = np.linspace(0, 1, PIEZO, dtype=np.float32)[None]
    x = head * (1 - pos) ** rng.uniform(0.8, 1.5, (n, 1)) + rng.normal(0, 0.5, (n, PIEZO))
    y = (0.02 * head[:, 0] ** 1.3 + 0.01 * x[:, PIEZO // 2]).astype(np.float32)[:, None]
    sid = rng.integers(0, STATIONS, n).astype(np.int32)
    return (x / 60.0).astype(np.float32), sid, y


class TimedCheckpointer(keras.callbacks.Callback):
    """Stamps the step, then saves every SAVE_EVERY batches, then restarts the clock after the save."""

    def __init__(self, directory):
        super().__init__()
        self.directory = directory
        self.gaps, self.last = [], None
        self.save_seconds, self.saves = 0.0, 0
        self.manager = None

    def on_train_begin(self, logs=None):
        ckpt = tf.train.Checkpoint(model=self.model, optimizer=self.model.optimizer)
        self.manager = tf.train.CheckpointManager(ckpt, self.directory, max_to_keep=3)

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
        if (batch + 1) % SAVE_EVERY == 0:
            self.manager.save()
            after = time.perf_counter()
            self.save_seconds += after - now
            self.saves += 1
            self.last = after


def build_model():
    x_in = keras.Input((PIEZO,), name="piezometers")
    s_in = keras.Input((), dtype="int32", name="station")
    site = keras.layers.Embedding(STATIONS, SITE_DIM, trainable=False, name="site_table")(s_in)
    h = keras.layers.Concatenate()([x_in, site])
    h = keras.layers.Dense(256, activation="relu")(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    m = keras.Model([x_in, s_in], keras.layers.Dense(1)(h))
    m.compile(optimizer="adam", loss="mse")
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u74_checkpoint_ckptmanager_batchcb_damseepage_")
    try:
        x, sid, y = make_piezometers(N_OBS)
        ds = (tf.data.Dataset.from_tensor_slices(((x, sid), y)).cache()
              .shuffle(N_OBS, seed=5).repeat().batch(BATCH).prefetch(2))
        tf.random.set_seed(0)
        model = build_model()
        cb = TimedCheckpointer(os.path.join(tmp, "full"))
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[cb], verbose=0)
        full = sec_per_step(cb.gaps)
        emit({"steps_per_second": 1.0 / full})
        wall = time.perf_counter() - WALL0
        print(f"[checkpoint_ckptmanager_batchcb_damseepage] full {full*1000:.1f} ms/step ({1.0/full:.2f} steps/s), "
              f"{cb.saves} saves {cb.save_seconds:.1f}s = {100*cb.save_seconds/wall:.1f}% of wall {wall:.1f}s")
        if TRUTH:
            xb, yb = next(iter(ds))
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            tf.random.set_seed(0)
            m2 = build_model()
            cb2 = TimedCheckpointer(os.path.join(tmp, "truth"))
            m2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[cb2], verbose=0)
            comp = sec_per_step(cb2.gaps)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            wall = time.perf_counter() - WALL0
            tot = cb.save_seconds + cb2.save_seconds
            print(f"[checkpoint_ckptmanager_batchcb_damseepage] truth compute {comp*1000:.1f} ms/step, input fraction "
                  f"{frac:.3f}; saves total {tot:.1f}s = {100*tot/wall:.1f}% of wall {wall:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
