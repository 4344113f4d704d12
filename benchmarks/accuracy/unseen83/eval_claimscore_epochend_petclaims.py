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


# Pet-insurance claims: a claim-approval model is trained on recent claims; after
# every epoch a callback scores the whole held-out claims book (model.predict on
# ~700k claims) to track the approval-rate drift. Scoring dominates the wall time.
NUM_FEATS = 64
TRAIN_CLAIMS = 40_000
HELDOUT_CLAIMS = 700_000
BATCH = 256
STEPS = 40
EPOCHS = 6
EVAL_SECONDS = [0.0]


def make_claims(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size=(n, NUM_FEATS), dtype=np.float32)
    # columns: vet-bill amount, pet age, breed risk score, pre-existing flag, ...
    logit = 1.2 * x[:, 0] - 0.8 * x[:, 1] + 0.5 * x[:, 2] * x[:, 3] - 0.3 * x[:, 4] ** 2
    y = (logit + rng.normal(0, 0.5, size=n) > 0).astype(np.float32)[:, None]
    return x, y


class HeldoutScoring(keras.callbacks.Callback):
    def __init__(self, x_heldout):
        super().__init__()
        self.x_heldout = x_heldout
        self.approval_rates = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        probs = self.model.predict(self.x_heldout, batch_size=1024, verbose=0)
        self.approval_rates.append(float((probs > 0.5).mean()))
        EVAL_SECONDS[0] += time.perf_counter() - t


def build_model():
    keras.utils.set_random_seed(83)
    inp = keras.Input((NUM_FEATS,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def train(dataset, x_heldout):
    model = build_model()
    timer = StepTimer()
    scorer = HeldoutScoring(x_heldout)
    model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, scorer], verbose=0)
    return timer.seconds_per_step(), scorer.approval_rates[-1]


x_train, y_train = make_claims(TRAIN_CLAIMS, 1)
x_heldout, _ = make_claims(HELDOUT_CLAIMS, 2)
claims = (tf.data.Dataset.from_tensor_slices((x_train, y_train))
          .shuffle(4096, seed=3).repeat().batch(BATCH, drop_remainder=True))
full, approval = train(claims, x_heldout)
emit({"steps_per_second": 1.0 / full})
summary = "petclaims fit+epoch-end predict: %.2f ms/step, approval %.3f" % (full * 1000, approval)
if TRUTH:
    fixed = (x_train[:BATCH], y_train[:BATCH])
    compute, _ = train(tf.data.Dataset.from_tensors(fixed).repeat(), x_heldout)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    summary += ", fixed-batch %.2f ms/step, truth_input_fraction=%.3f" % (compute * 1000, frac)
wall = time.perf_counter() - T0
print(summary + ", evaluation %.1f s of wall %.1f s = %.1f%%" % (
    EVAL_SECONDS[0], wall, 100.0 * EVAL_SECONDS[0] / wall))
