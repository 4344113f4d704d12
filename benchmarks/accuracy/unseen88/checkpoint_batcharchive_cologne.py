"""Eau de cologne formulas -> accord profile (citrus, aromatic, floral, woody, musk ...).

Each formula is a vector of ingredient percentages (bergamot, neroli,
petitgrain, rosemary, lavender, ...) plus dilution and maceration time.  The
perfumer's training script archives the full model to a .keras file after
every few batches so a pre-empted job never loses work.  One callback both
stamps step times and saves; the clock restarts after each save.
"""
import time; T0 = time.perf_counter()
import os, sys, json, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StampAndArchive(keras.callbacks.Callback):
    """Stamps step times and archives the full model every `every` batches."""

    def __init__(self, path, every):
        super().__init__()
        self.path, self.every = path, every
        self.gaps, self.last, self.save_seconds, self.saves, self.seen = [], None, 0.0, 0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
        self.seen += 1
        if self.seen % self.every == 0:
            t = time.perf_counter()
            self.model.save(self.path)
            self.save_seconds += time.perf_counter() - t
            self.saves += 1
            self.last = time.perf_counter()

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


BATCH, STEPS, EPOCHS, SAVE_EVERY = 64, 75, 3, 1
INGREDIENTS = 160
ACCORDS = 12


def make_formulas(n, seed=88):
    rng = np.random.default_rng(seed)
    pct = rng.dirichlet(np.full(INGREDIENTS, 0.08), n).astype(np.float32)
    extra = np.stack([rng.uniform(0.03, 0.08, n), rng.uniform(1, 8, n) / 8], 1).astype(np.float32)
    w = rng.normal(0, 1, (INGREDIENTS, ACCORDS)).astype(np.float32)
    y = 1 / (1 + np.exp(-(pct @ w) * 6))
    return np.concatenate([pct, extra], 1), y.astype(np.float32)


def build_model():
    keras.utils.set_random_seed(88)
    inp = keras.Input((INGREDIENTS + 2,))
    h = layers.Dense(1024, activation="relu")(inp)
    h = layers.Dense(1024, activation="relu")(h)
    h = layers.Dense(1024, activation="relu")(h)
    h = layers.Dense(512, activation="relu")(h)
    m = keras.Model(inp, layers.Dense(ACCORDS, activation="sigmoid")(h))
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def train(ds, path):
    model = build_model()
    cb = StampAndArchive(path, SAVE_EVERY)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
    return cb


root = tempfile.mkdtemp(prefix="u88_checkpoint_batcharchive_cologne_")
try:
    X, Y = make_formulas(4096)
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(4096, seed=88).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
    cb = train(ds, os.path.join(root, "cologne_latest.keras"))
    full = cb.seconds_per_step()
    wall = time.perf_counter() - T0
    emit({"steps_per_second": 1.0 / full})
    print(f"[cologne] {1.0 / full:.2f} steps/s, {cb.saves} saves took {cb.save_seconds:.1f}s of wall {wall:.1f}s "
          f"= {100 * cb.save_seconds / wall:.1f}%")

    if TRUTH:
        batch = next(iter(ds))
        cb2 = train(tf.data.Dataset.from_tensors(batch).repeat(), os.path.join(root, "cologne_truth.keras"))
        compute = cb2.seconds_per_step()
        F = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": F})
        print(f"[cologne] truth: full {full * 1000:.1f} ms, compute {compute * 1000:.1f} ms, input fraction {F:.3f}, "
              f"truth-run saves {cb2.save_seconds:.1f}s")
finally:
    shutil.rmtree(root, ignore_errors=True)
