import time; T0 = time.perf_counter()
import os
import sys
import json
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
    """Stamps perf_counter at the end of every training batch; gaps only within an epoch."""

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

# Lamp rotation timing logs: each sample is a raw photodiode trace recorded at the
# lantern gallery while the lens assembly turns.  A Python generator decodes the
# trace (thresholding, flash-edge detection, spectrum) into a feature vector and
# tf.data.Dataset.from_generator feeds model.fit.

BATCH = 64
STEPS_PER_EPOCH = 45
EPOCHS = 4
TRACE_LEN = 4096
N_FEAT = 256
CHARACTERISTICS = ["Fl 5s", "Fl(2) 10s", "Fl(3) 15s", "Oc 4s", "Iso 6s", "LFl 10s", "Q", "VQ(6)+LFl 10s"]
N_CLASS = len(CHARACTERISTICS)
PASSES = 1  # smoothing passes per trace (per-sample Python work)


def synth_trace(rng, cls):
    t = np.arange(TRACE_LEN) / 200.0  # 200 Hz photodiode, ~20 s log
    period = [5, 10, 15, 4, 6, 10, 1, 10][cls]
    flashes = [1, 2, 3, 1, 1, 1, 1, 7][cls]
    phase = (t + rng.uniform(0, period)) % period
    sig = np.zeros_like(t)
    for k in range(flashes):
        start = k * 0.6
        width = 0.25 if cls not in (3, 4) else period * 0.45
        sig += ((phase >= start) & (phase < start + width)).astype(np.float64)
    if cls == 3:
        sig = 1.0 - sig
    sig = sig * rng.uniform(0.6, 1.2) + rng.normal(0, 0.15, TRACE_LEN) + 0.2 * np.sin(t * 0.3)
    return sig


def decode_trace(sig):
    s = sig.copy()
    for _ in range(PASSES):
        s = np.convolve(s, np.ones(9) / 9.0, mode="same")
    thr = 0.5 * (np.percentile(s, 95) + np.percentile(s, 5))
    on = s > thr
    edges = np.flatnonzero(np.diff(on.astype(np.int8)) != 0)
    durations = np.diff(edges) / 200.0 if len(edges) > 1 else np.zeros(1)
    hist, _ = np.histogram(durations, bins=64, range=(0, 16))
    spec = np.abs(np.fft.rfft(s - s.mean()))[: N_FEAT - 64 - 8]
    spec = np.log1p(spec)
    stats = np.array([s.mean(), s.std(), on.mean(), len(edges) / 50.0,
                      durations.mean(), durations.std(), durations.max(), np.median(durations)])
    return np.concatenate([hist / max(1, hist.sum()), stats, spec]).astype(np.float32)


def rotation_log_generator():
    rng = np.random.default_rng(97)
    while True:
        cls = int(rng.integers(N_CLASS))
        yield decode_trace(synth_trace(rng, cls)), np.int32(cls)


def build_model():
    keras.utils.set_random_seed(1)
    inp = keras.Input((N_FEAT,))
    x = keras.layers.Dense(1536, activation="relu")(inp)
    x = keras.layers.Dense(1536, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(N_CLASS)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def make_dataset():
    ds = tf.data.Dataset.from_generator(
        rotation_log_generator,
        output_signature=(tf.TensorSpec((N_FEAT,), tf.float32), tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH).prefetch(2)


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


full = train(make_dataset())
emit({"steps_per_second": 1.0 / full})
print(f"[lampspin] normal run: {full*1000:.2f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    one = next(iter(make_dataset()))
    compute = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[lampspin] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
