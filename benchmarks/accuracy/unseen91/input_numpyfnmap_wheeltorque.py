"""Pottery-wheel torque sensor -> throwing-stage classifier.

A strain-gauge torque sensor on the wheel-head shaft logs at 1 kHz while a
potter centres, opens, pulls walls and trims.  Each record id is mapped with
tf.numpy_function (serial map, no parallel calls) to a decoded trace:
pedal-speed normalisation, notch filter for mains hum, spectrogram-style band
energies.  Batches feed model.fit.
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

TRACE = 4096
FRAME = 128
HOP = 64
N_FRAMES = (TRACE - FRAME) // HOP + 1
BANDS = 32
BATCH = 32
STEPS = 160
EPOCHS = 3
STAGES = ["centering", "opening", "pulling", "trimming", "idle"]


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


WINDOW_FN = np.hanning(FRAME)
BAND_EDGES = np.linspace(0, FRAME // 2 + 1, BANDS + 1).astype(int)


def decode_trace(record_id):
    rid = int(record_id)
    r = np.random.default_rng(rid)
    stage = rid % len(STAGES)
    t = np.arange(TRACE) / 1000.0
    rpm = 60 + 180 * r.random() + 20 * np.sin(2 * np.pi * 0.3 * t)      # pedal wander
    torque = (0.4 + 0.3 * stage) * np.sin(2 * np.pi * rpm / 60 * t) + 0.08 * stage * r.standard_normal(TRACE)
    torque += 0.2 * np.sin(2 * np.pi * 50 * t)                          # mains hum
    # per-revolution normalisation
    torque = (torque - np.convolve(torque, np.ones(401) / 401, mode="same")) / (rpm / 120.0)
    # notch at 50 Hz and harmonics
    spec = np.fft.rfft(torque)
    freqs = np.fft.rfftfreq(TRACE, 1 / 1000.0)
    for h in (50, 100, 150):
        spec[np.abs(freqs - h) < 1.0] = 0
    torque = np.fft.irfft(spec, TRACE)
    frames = np.stack([torque[i * HOP:i * HOP + FRAME] * WINDOW_FN for i in range(N_FRAMES)])
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    bands = np.stack([power[:, BAND_EDGES[b]:BAND_EDGES[b + 1]].sum(axis=1) for b in range(BANDS)], axis=1)
    feats = np.log1p(bands).astype(np.float32)
    feats = (feats - feats.mean()) / (feats.std() + 1e-6)
    return feats, np.int32(stage)


def to_example(record_id):
    x, y = tf.numpy_function(decode_trace, [record_id], (tf.float32, tf.int32))
    x.set_shape((N_FRAMES, BANDS))
    y.set_shape(())
    return x, y


def make_model():
    return keras.Sequential([
        keras.Input((N_FRAMES, BANDS)),
        keras.layers.Conv1D(96, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(96, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(128, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(96, activation="relu"),
        keras.layers.Dense(len(STAGES)),
    ])


def train(dataset):
    keras.utils.set_random_seed(91)
    model = make_model()
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    timer = StepTimer()
    model.fit(dataset, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


ids = tf.data.Dataset.range(1_000_000).shuffle(4096, seed=91).repeat()
ds = ids.map(to_example).batch(BATCH)
full = train(ds)
emit({"steps_per_second": 1.0 / full})
print(f"wheeltorque: normal run {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f}s")

if TRUTH:
    fixed = next(iter(ds))
    compute = train(tf.data.Dataset.from_tensors(fixed).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"wheeltorque: truth compute {compute*1000:.1f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
