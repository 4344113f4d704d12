"""Kiln thermocouple logs -> firing-fault classifier.

Each sample is a window of a bisque/glaze firing log from four type-K
thermocouples (top, middle, bottom, flue).  A Python generator rebuilds each
window from the raw log (cold-junction compensation, despiking with a
running median, ramp-rate features) and feeds model.fit through
tf.data.Dataset.from_generator.
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

WINDOW = 192
CHANNELS = 4
FEATS = CHANNELS * 3
BATCH = 48
STEPS = 45
EPOCHS = 3
MEDIAN_K = 7


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


rng = np.random.default_rng(91)
# one long synthetic firing log: ramp to cone 04, hold, cool; four thermocouples
n_log = 60000
t = np.arange(n_log, dtype=np.float64)
profile = np.clip(t / 30.0, 0, 1060) - np.clip((t - 40000) / 25.0, 0, 1000)
raw_log = profile[:, None] + rng.normal(0, 3.0, (n_log, CHANNELS)) + np.array([8.0, 0.0, -15.0, -60.0])
spikes = rng.random((n_log, CHANNELS)) < 0.004
raw_log[spikes] += rng.normal(0, 400, spikes.sum())
cold_junction = 20 + 5 * np.sin(t / 3000.0)
fault_at = rng.integers(0, n_log - WINDOW, 4000)


def running_median(x, k):
    half = k // 2
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        lo = max(0, i - half)
        out[i] = np.median(x[lo:i + half + 1], axis=0)
    return out


def window_features(start):
    # log is sampled at 2 Hz; decimate to 1 Hz after cold-junction compensation
    w = raw_log[start:start + 2 * WINDOW] + cold_junction[start:start + 2 * WINDOW, None]
    w = w.reshape(WINDOW, 2, CHANNELS).mean(axis=1)
    w = running_median(w, MEDIAN_K)
    ramp = np.gradient(w, axis=0) * 60.0
    spread = w - w.mean(axis=1, keepdims=True)
    feats = np.concatenate([(w - 500.0) / 500.0, ramp / 200.0, spread / 50.0], axis=1)
    return feats.astype(np.float32)


def firing_windows(seed):
    r = np.random.default_rng(seed)
    while True:
        start = int(r.integers(0, n_log - 2 * WINDOW))
        label = int(np.min(np.abs(fault_at - start)) < 20)
        yield window_features(start), np.int32(label)


def make_model():
    return keras.Sequential([
        keras.Input((WINDOW, FEATS)),
        keras.layers.Conv1D(96, 7, padding="same", activation="relu"),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(2),
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


sig = (tf.TensorSpec((WINDOW, FEATS), tf.float32), tf.TensorSpec((), tf.int32))
ds = tf.data.Dataset.from_generator(lambda: firing_windows(7), output_signature=sig).batch(BATCH)
full = train(ds)
emit({"steps_per_second": 1.0 / full})
print(f"kilnthermo: normal run {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f}s")

if TRUTH:
    fixed = next(iter(ds))
    compute = train(tf.data.Dataset.from_tensors(fixed).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"kilnthermo: truth compute {compute*1000:.1f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
