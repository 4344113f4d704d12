"""Shard X-ray fluorescence spectra -> kiln-site / clay-source classifier.

Portable XRF readings of archaeological and studio sherds (2048 channel
energy spectra, K/Ca/Ti/Fe/Rb/Sr/Zr lines on a bremsstrahlung background)
are synthesised once, held in memory, and fed to model.fit through
tf.data.Dataset.from_tensor_slices(...).batch().prefetch().  A 1-D CNN does
the heavy lifting, so the run is compute-bound.
"""
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

CHANNELS = 512
N_SHARDS = 3200
SOURCES = 8
BATCH = 64
EPOCHS = 5
LINES_KEV = [3.31, 3.69, 4.51, 6.40, 7.06, 13.39, 14.16, 15.77]   # K Ca Ti Fe(Ka,Kb) Rb Sr Zr


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


def make_spectra():
    r = np.random.default_rng(91)
    kev = np.linspace(0.5, 20, CHANNELS)
    profiles = r.uniform(0.2, 3.0, (SOURCES, len(LINES_KEV)))
    labels = r.integers(0, SOURCES, N_SHARDS)
    conc = profiles[labels] * r.lognormal(0, 0.15, (N_SHARDS, len(LINES_KEV)))
    peaks = np.exp(-0.5 * ((kev[None, None, :] - np.array(LINES_KEV)[None, :, None]) / 0.08) ** 2)
    spec = np.einsum("nl,lc->nc", conc, peaks[0]) * 400 + 60 * np.exp(-kev / 6)[None, :]
    counts = r.poisson(spec).astype(np.float32)
    return np.log1p(counts)[..., None], labels.astype(np.int32)


def make_model():
    return keras.Sequential([
        keras.Input((CHANNELS, 1)),
        keras.layers.Conv1D(32, 9, padding="same", activation="relu"),
        keras.layers.Conv1D(48, 9, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(64, 7, padding="same", activation="relu"),
        keras.layers.Conv1D(64, 7, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(96, 5, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(SOURCES),
    ])


def train(dataset, steps=None):
    keras.utils.set_random_seed(91)
    model = make_model()
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    timer = StepTimer()
    model.fit(dataset, epochs=EPOCHS, steps_per_epoch=steps, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


x, y = make_spectra()
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).prefetch(tf.data.AUTOTUNE)
steps = N_SHARDS // BATCH
full = train(ds)
emit({"steps_per_second": 1.0 / full})
print(f"shardxrf: normal run {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f}s")

if TRUTH:
    fixed = (x[:BATCH], y[:BATCH])
    compute = train(tf.data.Dataset.from_tensors(fixed).repeat(), steps=steps)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"shardxrf: truth compute {compute*1000:.1f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
