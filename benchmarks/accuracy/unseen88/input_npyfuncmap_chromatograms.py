"""Gas-chromatograph traces of fragrance blends -> olfactive family.

Raw FID detector traces (6000 points, drifting baseline, shot noise) are held
in memory.  tf.data maps each trace through tf.numpy_function (serial, no
parallel calls): rolling-minimum baseline removal, Savitzky-Golay smoothing,
retention-index alignment and log scaling, then batches into model.fit.
"""
import time; T0 = time.perf_counter()
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
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


BATCH, STEPS, EPOCHS = 32, 100, 3
N_TRACES, RAW_LEN, OUT_LEN, FAMILIES = 320, 6000, 1024, 7
# Savitzky-Golay (window 11, quadratic) smoothing coefficients
SG = np.array([-36, 9, 44, 69, 84, 89, 84, 69, 44, 9, -36], np.float32) / 429.0


def make_traces(n, seed=88):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 40, RAW_LEN, dtype=np.float32)  # retention time, minutes
    marker_rt = rng.uniform(2, 38, (FAMILIES, 18))
    fam = rng.integers(0, FAMILIES, n).astype(np.int32)
    traces = np.empty((n, RAW_LEN), np.float32)
    for i in range(n):
        rt = marker_rt[fam[i]] + rng.normal(0, 0.05, 18)
        amp = rng.lognormal(0, 0.8, 18)
        sig = (amp[:, None] * np.exp(-0.5 * ((t[None] - rt[:, None]) / 0.04) ** 2)).sum(0)
        base = 0.2 + 0.01 * t + 0.05 * np.sin(t / rng.uniform(3, 8))
        traces[i] = 1000 * (sig + base) + rng.normal(0, 8, RAW_LEN)
    return traces, fam


def clean_trace(raw):
    base = sliding_window_view(np.pad(raw, 75, mode="edge"), 151).min(axis=1)
    base = np.convolve(base, np.ones(51) / 51, mode="same")
    sig = np.maximum(raw - base, 0.0)
    sig = np.convolve(sig, SG, mode="same")
    ri = np.cumsum(sig > 0.0) / RAW_LEN  # crude retention-index warp
    grid = np.linspace(0, 1, OUT_LEN)
    aligned = np.interp(grid, np.linspace(0, 1, RAW_LEN) * 0.5 + ri * 0.5, sig)
    return np.log1p(np.maximum(aligned, 0) / 50.0).astype(np.float32)[:, None]


def tf_clean(raw, family):
    x = tf.numpy_function(clean_trace, [raw], tf.float32)
    x.set_shape((OUT_LEN, 1))
    return x, family


def build_model():
    keras.utils.set_random_seed(88)
    inp = keras.Input((OUT_LEN, 1))
    h = layers.Conv1D(48, 9, strides=2, padding="same", activation="relu")(inp)
    h = layers.Conv1D(96, 7, strides=2, padding="same", activation="relu")(h)
    h = layers.Conv1D(128, 5, strides=2, padding="same", activation="relu")(h)
    h = layers.GlobalMaxPooling1D()(h)
    h = layers.Dense(64, activation="relu")(h)
    out = layers.Dense(FAMILIES)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


TRACES, FAMS = make_traces(N_TRACES)
ds = (tf.data.Dataset.from_tensor_slices((TRACES, FAMS))
      .shuffle(N_TRACES, seed=88).repeat()
      .map(tf_clean)
      .batch(BATCH))
full = train(ds)
emit({"steps_per_second": 1.0 / full})
print(f"[chromatograms] {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step) wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    batch = next(iter(ds))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    F = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": F})
    print(f"[chromatograms] truth: full {full * 1000:.1f} ms, compute {compute * 1000:.1f} ms, input fraction {F:.3f}")
