"""Perfume bottle filling-line sensors -> fill outcome (ok / under / over / foam).

A 1 kHz sensor stream (fill-weight load cell, nozzle pressure, cap torque,
conveyor speed, vacuum) is recorded per bottle.  A Python loop cuts each
batch of bottle windows out of the stream, detrends them with np.polyfit,
computes nozzle-pressure spectra and rolling RMS features, and pushes the
batch through model.train_on_batch.
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


BATCH, STEPS, WIN, CH = 64, 400, 512, 5
N_BOTTLES = 3000


def make_stream(seed=88):
    rng = np.random.default_rng(seed)
    outcome = rng.integers(0, 4, N_BOTTLES).astype(np.int32)
    t = np.arange(WIN) / 1000.0
    stream = np.empty((N_BOTTLES * WIN, CH), np.float32)
    for b in range(N_BOTTLES):
        target = {0: 50.0, 1: 48.5, 2: 51.5, 3: 50.0}[int(outcome[b])]
        weight = target * (1 - np.exp(-t / 0.08)) + rng.normal(0, 0.05, WIN)
        press = 1.8 + 0.05 * np.sin(2 * np.pi * rng.uniform(40, 60) * t) + rng.normal(0, 0.02, WIN)
        if outcome[b] == 3:  # foaming: high-frequency pressure chatter
            press += 0.08 * np.sin(2 * np.pi * 180 * t)
        torque = 0.9 + 0.02 * rng.standard_normal() + rng.normal(0, 0.01, WIN)
        speed = 0.35 + 0.002 * t + rng.normal(0, 0.003, WIN)
        vac = -0.6 + rng.normal(0, 0.01, WIN)
        stream[b * WIN:(b + 1) * WIN] = np.stack([weight, press, torque, speed, vac], 1)
    return stream, outcome


def bottle_features(win):
    t = np.arange(WIN, dtype=np.float64)
    cols = []
    for c in range(CH):
        coef = np.polyfit(t, win[:, c], 2)
        cols.append(win[:, c] - np.polyval(coef, t))
    det = np.stack(cols, 1)
    rms = np.sqrt(np.convolve(det[:, 1] ** 2, np.ones(16) / 16, mode="same"))
    spec = np.abs(np.fft.rfft(det[:, 1] * np.hanning(WIN)))[:256]
    spec = np.log1p(np.repeat(spec, 2))
    scaled = (win - win.mean(0)) / (win.std(0) + 1e-6)
    return np.column_stack([scaled, det * 10, rms * 10, spec]).astype(np.float32)[::4]


STREAM, OUTCOME = make_stream()


def make_batch(rng):
    idx = rng.integers(0, N_BOTTLES, BATCH)
    x = np.stack([bottle_features(STREAM[i * WIN:(i + 1) * WIN]) for i in idx])
    return x, OUTCOME[idx]


def build_model():
    keras.utils.set_random_seed(88)
    inp = keras.Input((WIN // 4, 2 * CH + 2))
    h = layers.Conv1D(96, 5, padding="same", activation="relu")(inp)
    h = layers.Conv1D(96, 5, padding="same", activation="relu")(h)
    h = layers.GlobalAveragePooling1D()(h)
    h = layers.Dense(64, activation="relu")(h)
    m = keras.Model(inp, layers.Dense(4)(h))
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(batch_source):
    model = build_model()
    stamps = []
    for step in range(STEPS):
        x, y = batch_source()
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss


rng = np.random.default_rng(0)
full, last_loss = train(lambda: make_batch(rng))
emit({"steps_per_second": 1.0 / full})
print(f"[fillingline] {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step) loss {last_loss:.3f} wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    fixed = make_batch(np.random.default_rng(1))
    compute, _ = train(lambda: fixed)
    F = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": F})
    print(f"[fillingline] truth: full {full * 1000:.1f} ms, compute {compute * 1000:.1f} ms, input fraction {F:.3f}")
