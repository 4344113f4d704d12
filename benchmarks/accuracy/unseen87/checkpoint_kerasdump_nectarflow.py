import time; T0 = time.perf_counter()
import json
import os
import sys
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


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / len(tail)


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

# Nectar-flow forecasting: daily apiary records (scale-hive weight gain,
# degree days, rainfall, soil moisture, bloom-calendar indicators for 40
# forage species) plus the id of the nearest mapped forage site (looked up in
# a frozen, pre-trained 200k-site flora embedding) predict next week's nectar
# flow.  The beekeeper's callback
# writes the full model to a .keras archive after every training batch "so a
# power cut in the honey house never loses progress"; those saves dominate.
# One callback stamps the step clock, then saves, then restarts the clock.

import shutil
import tempfile

N_ROWS = 16384
N_FEAT = 96
BATCH = 32
STEPS = 65
EPOCHS = 2
HIDDEN = 1024
FLORA_SITES = 200000


def apiary_days(rng):
    x = rng.normal(0.0, 1.0, (N_ROWS, N_FEAT)).astype(np.float32)
    y = (0.8 * x[:, 0] + 0.5 * x[:, 1] * x[:, 2] - 0.3 * x[:, 3] + rng.normal(0, 0.3, N_ROWS))
    site = rng.integers(0, FLORA_SITES, (N_ROWS, 1)).astype(np.int32)
    return x, site, y.astype(np.float32)[:, None]


class StampAndSave(keras.callbacks.Callback):
    def __init__(self, path):
        super().__init__()
        self.path = path
        self.gaps = []
        self.last = None
        self.save_seconds = 0.0
        self.saves = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.model.save(self.path)
        after = time.perf_counter()
        self.save_seconds += after - now
        self.saves += 1
        self.last = after


def build_model():
    num_in = keras.Input((N_FEAT,), name="daily_records")
    site_in = keras.Input((1,), dtype="int32", name="forage_site")
    flora = keras.layers.Embedding(FLORA_SITES, 32, trainable=False,
                                   name="flora_embedding")(site_in)
    h = keras.layers.Concatenate()([num_in, keras.layers.Flatten()(flora)])
    for _ in range(4):
        h = keras.layers.Dense(HIDDEN, activation="relu")(h)
    model = keras.Model([num_in, site_in], keras.layers.Dense(1)(h))
    model.compile(optimizer="adam", loss="mse")
    return model


workdir = tempfile.mkdtemp(prefix="u87_checkpoint_kerasdump_nectarflow_")
try:
    X, S, Y = apiary_days(np.random.default_rng(87))
    ds = (tf.data.Dataset.from_tensor_slices(((X, S), Y)).shuffle(4096, seed=87)
          .batch(BATCH, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE))
    keras.utils.set_random_seed(87)
    cb = StampAndSave(os.path.join(workdir, "nectarflow_latest.keras"))
    model = build_model()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
    full = seconds_per_step(cb.gaps)
    wall = time.perf_counter() - T0
    emit({"steps_per_second": 1.0 / full})
    print(f"[nectarflow] normal: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
          f"{cb.saves} saves took {cb.save_seconds:.1f} s of wall {wall:.1f} s "
          f"= {100.0 * cb.save_seconds / wall:.1f}% of wall")

    if TRUTH:
        one = tf.data.Dataset.from_tensors(((X[:BATCH], S[:BATCH]), Y[:BATCH])).repeat()
        keras.utils.set_random_seed(87)
        cb2 = StampAndSave(os.path.join(workdir, "nectarflow_truth.keras"))
        model2 = build_model()
        model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb2], verbose=0)
        compute = seconds_per_step(cb2.gaps)
        frac = truth_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"[nectarflow] truth: compute {compute * 1000:.1f} ms/step, "
              f"input fraction {frac:.3f}, truth-run saves {cb2.save_seconds:.1f} s")
finally:
    shutil.rmtree(workdir, ignore_errors=True)
