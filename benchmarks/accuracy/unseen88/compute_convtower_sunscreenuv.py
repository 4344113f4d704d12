"""Sunscreen UV absorbance spectra -> in-vitro SPF estimate.

Spectrophotometer scans (290-400 nm, 512 points) of sunscreen films on PMMA
plates, with a mix of UV filters (avobenzone, octocrylene, zinc oxide,
bemotrizinol ...).  Spectra sit in memory; tf.data from_tensor_slices +
batch + prefetch feeds a deep Conv1D tower in model.fit.
"""
import time; T0 = time.perf_counter()
import os, sys, json
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

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


BATCH, STEPS, EPOCHS, L = 32, 50, 3, 512
N = 4096
FILTER_PEAKS = {"avobenzone": 357, "octocrylene": 303, "bemotrizinol": 340, "zinc_oxide": 370,
                "ethylhexyl_triazone": 314, "homosalate": 306}


def make_spectra(n, seed=88):
    rng = np.random.default_rng(seed)
    wl = np.linspace(290, 400, L, dtype=np.float32)
    peaks = np.array(list(FILTER_PEAKS.values()), np.float32)
    conc = rng.dirichlet(np.ones(len(peaks)), n).astype(np.float32) * rng.uniform(0.5, 3.0, (n, 1))
    bands = np.exp(-0.5 * ((wl[None] - peaks[:, None]) / 14.0) ** 2)
    absorb = conc @ bands + rng.normal(0, 0.01, (n, L)).astype(np.float32)
    erythema = np.where(wl <= 298, 1.0, 10 ** (0.094 * (298 - wl))).astype(np.float32)
    spf = erythema.sum() / (erythema * 10 ** (-absorb)).sum(1)
    return absorb[..., None].astype(np.float32), np.log(spf).astype(np.float32)


def build_model():
    keras.utils.set_random_seed(88)
    inp = keras.Input((L, 1))
    h = inp
    for filters, k in ((64, 7), (64, 7), (128, 5), (128, 5), (192, 3)):
        h = layers.Conv1D(filters, k, padding="same", activation="relu")(h)
        h = layers.Conv1D(filters, k, padding="same", activation="relu")(h)
        h = layers.MaxPooling1D(2)(h)
    h = layers.GlobalAveragePooling1D()(h)
    h = layers.Dense(128, activation="relu")(h)
    m = keras.Model(inp, layers.Dense(1)(h))
    m.compile(optimizer="adam", loss="mse")
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


X, Y = make_spectra(N)
ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(BATCH, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE)
full = train(ds)
emit({"steps_per_second": 1.0 / full})
print(f"[sunscreenuv] {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step) wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    batch = next(iter(ds))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    F = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": F})
    print(f"[sunscreenuv] truth: full {full * 1000:.1f} ms, compute {compute * 1000:.1f} ms, input fraction {F:.3f}")
