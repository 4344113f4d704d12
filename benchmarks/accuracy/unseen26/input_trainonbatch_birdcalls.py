"""Bird call species classifier on MFCC features, trained with train_on_batch."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

SAMPLE_RATE = 16000
CLIP_SECONDS = 1.5
N_FFT = 512
HOP = 160
N_MELS = 40
N_MFCC = 20
N_SPECIES = 10
BATCH_SIZE = 32
STEPS = 70

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


# ---------------- features ----------------
def hz_to_mel(f):
    return 2595.0 * np.log10(1.0 + f / 700.0)


def mel_to_hz(m):
    return 700.0 * (10 ** (m / 2595.0) - 1.0)


def mel_filterbank():
    mels = np.linspace(hz_to_mel(0), hz_to_mel(SAMPLE_RATE / 2), N_MELS + 2)
    bins = np.floor((N_FFT + 1) * mel_to_hz(mels) / SAMPLE_RATE).astype(int)
    fb = np.zeros((N_MELS, N_FFT // 2 + 1))
    for m in range(1, N_MELS + 1):
        for k in range(bins[m - 1], bins[m]):
            fb[m - 1, k] = (k - bins[m - 1]) / max(bins[m] - bins[m - 1], 1)
        for k in range(bins[m], bins[m + 1]):
            fb[m - 1, k] = (bins[m + 1] - k) / max(bins[m + 1] - bins[m], 1)
    return fb


FILTERBANK = mel_filterbank()
DCT = np.cos(np.pi / N_MELS * (np.arange(N_MELS) + 0.5)[None, :] * np.arange(N_MFCC)[:, None])


def mfcc(signal):
    emphasized = np.append(signal[0], signal[1:] - 0.97 * signal[:-1])
    n_frames = 1 + (len(emphasized) - N_FFT) // HOP
    frames = np.stack([emphasized[i * HOP : i * HOP + N_FFT] for i in range(n_frames)])
    frames = frames * np.hamming(N_FFT)
    power = np.abs(np.fft.rfft(frames, N_FFT)) ** 2 / N_FFT
    mel_energy = np.log(power @ FILTERBANK.T + 1e-10)
    coeffs = mel_energy @ DCT.T
    coeffs -= coeffs.mean(axis=0, keepdims=True)
    return coeffs.astype(np.float32)


def synth_call(rng, species):
    t = np.arange(int(SAMPLE_RATE * CLIP_SECONDS)) / SAMPLE_RATE
    base = 1500 + 400 * species
    chirp = np.sin(2 * np.pi * (base + 300 * np.sin(2 * np.pi * (2 + species) * t)) * t)
    envelope = (np.sin(2 * np.pi * (3 + species % 4) * t) > 0).astype(float)
    return chirp * envelope + 0.3 * rng.standard_normal(t.shape)


def batch_generator(seed=0):
    rng = np.random.default_rng(seed)
    while True:
        ys = rng.integers(0, N_SPECIES, size=BATCH_SIZE)
        xs = np.stack([mfcc(synth_call(rng, y)) for y in ys])
        yield xs, ys.astype(np.int32)


N_FRAMES = 1 + (int(SAMPLE_RATE * CLIP_SECONDS) - N_FFT) // HOP


# ---------------- model ----------------
def build_model():
    inp = keras.Input((N_FRAMES, N_MFCC))
    x = keras.layers.Conv1D(256, 5, padding="same", activation="relu")(inp)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.Conv1D(256, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(N_SPECIES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy", metrics=["acc"])
    return model


def train(batches, tag):
    model = build_model()
    times = []
    for step in range(STEPS):
        x, y = next(batches)
        loss, acc = model.train_on_batch(x, y)
        times.append(time.perf_counter())
        if step % 30 == 0:
            print(f"[{tag}] step {step} loss={loss:.4f} acc={acc:.3f}")
    return (times[-1] - times[5]) / (len(times) - 6)


full = train(batch_generator(), "mfcc")
write_out({"steps_per_second": 1.0 / full})

if args.truth:
    fixed = next(batch_generator(seed=1))

    def same_batch():
        while True:
            yield fixed

    compute = train(same_batch(), "cached")
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    print(f"full={full:.4f}s/step compute={compute:.4f}s/step input_fraction={frac:.3f}")
else:
    print(f"done: {1.0 / full:.2f} steps/s ({full:.4f} s/step)")
