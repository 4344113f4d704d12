import time; T0 = time.perf_counter()
import json
import os
import sys
import shutil
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


# Grooming appointment books: predicts no-show / overrun for salon bookings from
# groomer, service, breed-size embeddings and booking numerics. One callback both
# stamps steps and saves the full model (.keras) after every batch, restarting the
# clock after the save so step gaps never contain a save.
GROOMERS = 300
SERVICES = 4000
NUM_NUMERIC = 24
BATCH = 128
STEPS = 120
EPOCHS = 3
SAVE_SECONDS = [0.0]


def make_bookings(n, seed):
    rng = np.random.default_rng(seed)
    groomer = rng.integers(0, GROOMERS, size=(n, 1)).astype(np.int32)
    service = rng.integers(0, SERVICES, size=(n, 1)).astype(np.int32)
    numeric = rng.normal(size=(n, NUM_NUMERIC)).astype(np.float32)
    y = ((numeric[:, 0] + (service[:, 0] % 7 == 0) - 0.4 * numeric[:, 3]) > 0.5).astype(np.float32)
    return (groomer, service, numeric), y[:, None]


class StampAndSave(keras.callbacks.Callback):
    def __init__(self, folder):
        super().__init__()
        self.folder = folder
        self.gaps = []
        self.last = None
        self.saves = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        path = os.path.join(self.folder, "groomingbook_latest.keras")
        self.model.save(path)
        self.saves += 1
        self.last = time.perf_counter()
        SAVE_SECONDS[0] += self.last - now

    def seconds_per_step(self):
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(gaps) / len(gaps)


def build_model():
    keras.utils.set_random_seed(83)
    g = keras.Input((1,), dtype="int32")
    s = keras.Input((1,), dtype="int32")
    n = keras.Input((NUM_NUMERIC,))
    ge = keras.layers.Flatten()(keras.layers.Embedding(GROOMERS, 32)(g))
    se = keras.layers.Flatten()(keras.layers.Embedding(SERVICES, 64)(s))
    x = keras.layers.Concatenate()([ge, se, n])
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model([g, s, n], out)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def train(dataset, folder):
    model = build_model()
    saver = StampAndSave(folder)
    model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[saver], verbose=0)
    return saver.seconds_per_step(), saver.saves


tmp = tempfile.mkdtemp(prefix="u83_checkpoint_kerasevery_batchsaver_groomingbook_")
try:
    feats, labels = make_bookings(20_000, 83)
    bookings = (tf.data.Dataset.from_tensor_slices((feats, labels))
                .shuffle(2048, seed=4).repeat().batch(BATCH, drop_remainder=True))
    full, saves = train(bookings, tmp)
    emit({"steps_per_second": 1.0 / full})
    summary = "groomingbook fit + .keras save every batch: %.2f ms/step, %d saves" % (full * 1000, saves)
    if TRUTH:
        fixed = next(iter(bookings))
        compute, _ = train(tf.data.Dataset.from_tensors(fixed).repeat(), tmp)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        summary += ", fixed-batch %.2f ms/step, truth_input_fraction=%.3f" % (compute * 1000, frac)
    wall = time.perf_counter() - T0
    print(summary + ", saving %.1f s of wall %.1f s = %.1f%%" % (
        SAVE_SECONDS[0], wall, 100.0 * SAVE_SECONDS[0] / wall))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
