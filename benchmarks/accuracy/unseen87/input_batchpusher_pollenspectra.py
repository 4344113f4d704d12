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

# Pollen-colour spectra: reflectance spectra (380-780 nm, 1 nm steps) of
# pollen loads scraped from a pollen trap, labelled with one of 12 forage
# plants.  A Python loop builds each batch: every spectrum is synthesised from
# pigment bands, smoothed (Savitzky-Golay style convolution), baseline-
# corrected with an iterative polynomial fit and converted to first
# derivative; model.train_on_batch does the update.

BATCH = 64
STEPS = 220
CHANNELS = 401
PLANTS = 12
HIDDEN = 1024
WL = np.linspace(380.0, 780.0, CHANNELS)
_rng_p = np.random.default_rng(1987)
PIGMENTS = _rng_p.uniform(0.0, 1.0, (PLANTS, 6))  # carotenoid/flavonoid/anthocyanin mix
CENTRES = np.array([420.0, 450.0, 480.0, 530.0, 560.0, 620.0])
SG = np.array([-21, 14, 39, 54, 59, 54, 39, 14, -21], np.float64) / 231.0


def pollen_spectrum(rng, plant):
    absorb = np.zeros(CHANNELS)
    for c, w in zip(CENTRES, PIGMENTS[plant] * rng.uniform(0.8, 1.2, 6)):
        absorb += w * np.exp(-0.5 * ((WL - c - rng.normal(0, 3)) / 25.0) ** 2)
    refl = np.exp(-absorb) * rng.uniform(0.6, 0.9)
    refl += 0.05 + 0.0002 * (WL - 380.0) * rng.uniform(0.5, 1.5)  # lamp drift
    refl += rng.normal(0.0, 0.01, CHANNELS)
    return refl


def preprocess(refl):
    smooth = np.convolve(refl, SG, mode="same")
    x = (WL - 580.0) / 200.0
    work = smooth.copy()
    for _ in range(5):  # modified polynomial baseline (ModPoly)
        coef = np.polyfit(x, work, 4)
        base = np.polyval(coef, x)
        work = np.minimum(work, base)
    corrected = smooth - base
    deriv = np.gradient(corrected)
    out = np.concatenate([corrected, deriv * 20.0])
    return ((out - out.mean()) / (out.std() + 1e-8)).astype(np.float32)


def make_batch(rng):
    y = rng.integers(0, PLANTS, BATCH).astype(np.int32)
    x = np.stack([preprocess(pollen_spectrum(rng, int(p))) for p in y])
    return x, y


def build_model():
    model = keras.Sequential([
        keras.Input((2 * CHANNELS,)),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dropout(0.1),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN // 2, activation="relu"),
        keras.layers.Dense(PLANTS),
    ])
    model.compile(optimizer=keras.optimizers.Adam(3e-4),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def run(batch_source):
    keras.utils.set_random_seed(87)
    model = build_model()
    gaps, last, loss_val = [], None, float("nan")
    for _ in range(STEPS):
        x, y = batch_source()
        loss_val = float(model.train_on_batch(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return seconds_per_step(gaps), loss_val


rng = np.random.default_rng(87)
full, loss_val = run(lambda: make_batch(rng))
emit({"steps_per_second": 1.0 / full})
print(f"[pollenspectra] normal: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
      f"loss {loss_val:.3f}, wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    fixed = make_batch(np.random.default_rng(88))
    compute, _ = run(lambda: fixed)
    frac = truth_fraction(full, compute)
    emit({"truth_input_fraction": frac})
    print(f"[pollenspectra] truth: compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}")
