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


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every batch end; gaps only within an epoch."""

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

    def seconds_per_step(self):
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(gaps) / len(gaps)


# Kennel roster: boarding-kennel stays (dog id, run number, feeding/medication
# codes over the last 32 events) predict "needs vet check at pickup". A debugging
# callback keeps a copy of the dog-embedding table after every batch "to plot its
# drift later" -- the list is never freed, so host memory grows through the run.
DOGS = 16_000
EMB = 96
SEQ = 32
BATCH = 256
STEPS = 90
EPOCHS = 3
EMBEDDING_HISTORY = []


def rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


class EmbeddingDriftLog(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.rss = []

    def on_train_batch_end(self, batch, logs=None):
        table = self.model.get_layer("dog_embedding").get_weights()[0]
        EMBEDDING_HISTORY.append(np.array(table, copy=True))

    def on_epoch_end(self, epoch, logs=None):
        self.rss.append(rss_mib())


def make_stays(n, seed):
    rng = np.random.default_rng(seed)
    events = rng.integers(0, DOGS, size=(n, SEQ)).astype(np.int32)
    y = ((events[:, :4] % 13 == 0).any(axis=1)).astype(np.float32)[:, None]
    return events, y


def build_model():
    keras.utils.set_random_seed(83)
    inp = keras.Input((SEQ,), dtype="int32")
    x = keras.layers.Embedding(DOGS, EMB, name="dog_embedding")(inp)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def train(dataset):
    model = build_model()
    timer = StepTimer()
    drift = EmbeddingDriftLog()
    model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, drift], verbose=0)
    return timer.seconds_per_step(), drift.rss


x, y = make_stays(50_000, 83)
stays = (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(4096, seed=2)
         .repeat().batch(BATCH, drop_remainder=True).prefetch(2))
full, rss = train(stays)
emit({"steps_per_second": 1.0 / full})
summary = "kennelroster fit + embedding stash: %.2f ms/step, RSS per epoch %s MiB, %d snapshots" % (
    full * 1000, [int(r) for r in rss], len(EMBEDDING_HISTORY))
if TRUTH:
    fixed = (x[:BATCH], y[:BATCH])
    compute, rss2 = train(tf.data.Dataset.from_tensors(fixed).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    summary += ", fixed-batch %.2f ms/step (RSS %s MiB), truth_input_fraction=%.3f" % (
        compute * 1000, [int(r) for r in rss2], frac)
print(summary + ", wall %.1f s" % (time.perf_counter() - T0))
