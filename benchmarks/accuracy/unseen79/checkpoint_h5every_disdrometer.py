"""Optical disdrometers: estimate rain rate and radar reflectivity from drop-size/velocity spectra.

Each one-minute record is a 32 size x 32 fall-velocity count matrix plus the index of its
site-and-hour-of-year slot, looked up in a large frozen climatology embedding (drop-size
moments per site and hour, fitted offline). The operations team wants
to be able to resume a crashed run from the latest batch, so a callback writes the model
weights to a .weights.h5 file after every training batch.
"""
import time; T0 = time.perf_counter()
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

N_RECORDS = 20000
N_SITES = 40
SLOTS = N_SITES * 365 * 24   # site x hour-of-year climatology rows
CLIM_DIM = 48
BINS = 32
BATCH = 32
STEPS = 40
EPOCHS = 4
SAVE_SECONDS = [0.0]


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


class TimedBatchCheckpoint(keras.callbacks.Callback):
    """Stamps each step, then saves the weights, then restarts the clock after the save."""

    def __init__(self, path):
        super().__init__()
        self.path = path
        self.gaps = []
        self.last = None
        self.saves = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        t = time.perf_counter()
        self.model.save_weights(self.path)
        self.saves += 1
        SAVE_SECONDS[0] += time.perf_counter() - t
        self.last = time.perf_counter()

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


rng = np.random.default_rng(7911)
diam = np.linspace(0.2, 8.0, BINS)
n0 = rng.lognormal(8.5, 0.6, (N_RECORDS, 1))
lam = rng.uniform(1.5, 5.0, (N_RECORDS, 1))
nd = n0 * np.exp(-lam * diam[None, :])                       # Marshall-Palmer-like spectra
vel_bin = np.clip(((9.65 - 10.3 * np.exp(-0.6 * diam)) / 10.0 * BINS).astype(int), 0, BINS - 1)
spectra = np.zeros((N_RECORDS, BINS, BINS), dtype=np.float32)
spectra[:, np.arange(BINS), vel_bin] = nd * 1e-3
spectra += rng.poisson(0.2, spectra.shape)
x_all = np.log1p(spectra)[..., None].astype(np.float32)
rain_rate = (6e-4 * np.pi * (nd * diam ** 3 * (9.65 - 10.3 * np.exp(-0.6 * diam))).sum(axis=1) * 0.24)
y_all = np.log1p(rain_rate).astype(np.float32).reshape(-1, 1)
slot_all = rng.integers(0, SLOTS, N_RECORDS).astype(np.int32)
climatology = (rng.normal(0, 0.1, (SLOTS, CLIM_DIM))).astype(np.float32)

ds = tf.data.Dataset.from_tensor_slices(((x_all, slot_all), y_all)).shuffle(4096, seed=79).repeat().batch(BATCH).prefetch(2)


def make_model():
    inp = keras.Input(shape=(BINS, BINS, 1))
    slot = keras.Input(shape=(), dtype="int32")
    clim = keras.layers.Embedding(SLOTS, CLIM_DIM, trainable=False, name="site_hour_climatology",
                                  embeddings_initializer=keras.initializers.Constant(climatology))(slot)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Concatenate()([x, clim])
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    m = keras.Model([inp, slot], keras.layers.Dense(1)(x), name="dsd_rainrate")
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return m


tmp = tempfile.mkdtemp(prefix="u79_checkpoint_h5every_disdrometer_")
try:
    keras.utils.set_random_seed(79)
    model = make_model()
    ckpt = TimedBatchCheckpoint(os.path.join(tmp, "dsd_latest.weights.h5"))
    t_fit = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[ckpt], verbose=0)
    fit_s = time.perf_counter() - t_fit
    full = ckpt.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    wall = time.perf_counter() - T0
    print(f"disdrometer h5every: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, {ckpt.saves} saves "
          f"({model.count_params()} params), save {SAVE_SECONDS[0]:.1f}s of wall {wall:.1f}s = "
          f"{SAVE_SECONDS[0]/wall:.1%} saving")

    if TRUTH:
        xb, yb = next(iter(ds.take(1)))
        one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        keras.utils.set_random_seed(79)
        model2 = make_model()
        ckpt2 = TimedBatchCheckpoint(os.path.join(tmp, "dsd_truth.weights.h5"))
        model2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[ckpt2], verbose=0)
        compute = ckpt2.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        wall = time.perf_counter() - T0
        print(f"truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}; "
              f"save {SAVE_SECONDS[0]:.1f}s of wall {wall:.1f}s = {SAVE_SECONDS[0]/wall:.1%} saving")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
