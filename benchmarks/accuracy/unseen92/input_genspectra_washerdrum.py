import time; T0 = time.perf_counter()
# Washer drum vibration classifier: a Python generator synthesises 3-axis
# accelerometer windows per wash cycle, turns them into log band energies
# and spectral peaks, and tf.data.Dataset.from_generator feeds model.fit.
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
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


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


BATCH = 32
STEPS = 85
EPOCHS = 3
WINDOW = 2048
N_BANDS = 64
FS = 1600.0  # Hz, drum accelerometer
CLASSES = ["balanced", "overloaded", "bearing_wear", "loose_counterweight"]


def drum_window(rng, label):
    """One 3-axis vibration window from a spinning drum, as raw counts."""
    t = np.arange(WINDOW) / FS
    rpm = rng.uniform(400, 1400)
    f0 = rpm / 60.0
    axes = []
    for axis in range(3):
        sig = 0.2 * rng.standard_normal(WINDOW)
        sig += (1.0 + 0.8 * (label == 1)) * np.sin(2 * np.pi * f0 * t + rng.uniform(0, 6.28))
        sig += 0.3 * np.sin(2 * np.pi * 2 * f0 * t)
        if label == 2:
            sig += 0.25 * np.sin(2 * np.pi * rng.uniform(180, 260) * t) * (1 + np.sin(2 * np.pi * f0 * t))
        if label == 3:
            sig += 0.6 * np.sign(np.sin(2 * np.pi * f0 * t + axis))
        axes.append(np.round(sig * 512).astype(np.int16))
    return axes


def featurize(axes):
    feats = []
    edges = np.geomspace(2, WINDOW // 2, N_BANDS + 1).astype(int)
    for raw in axes:
        x = raw.astype(np.float64) / 512.0
        x = x - x.mean()
        x = x * np.hanning(WINDOW)
        spec = np.abs(np.fft.rfft(x)) ** 2
        for b in range(N_BANDS):
            lo, hi = edges[b], max(edges[b + 1], edges[b] + 1)
            feats.append(float(np.log1p(spec[lo:hi].sum())))
        # crude peak picking in Python
        peaks = []
        for k in range(2, len(spec) - 2, 4):
            if spec[k] > spec[k - 1] and spec[k] > spec[k + 1] and spec[k] > 5.0:
                peaks.append(k)
        peaks = sorted(peaks, key=lambda k: -spec[k])[:8]
        peaks += [0] * (8 - len(peaks))
        feats.extend(p / (WINDOW / 2) for p in peaks)
        rms = [float(np.sqrt(np.mean(x[i:i + 256] ** 2))) for i in range(0, WINDOW, 256)]
        feats.extend(rms)
    return np.asarray(feats, dtype=np.float32)


N_FEAT = 3 * (N_BANDS + 8 + WINDOW // 256)


def vibration_batches(seed):
    rng = np.random.default_rng(seed)
    while True:
        labels = rng.integers(0, 4, size=BATCH)
        xb = np.stack([featurize(drum_window(rng, int(l))) for l in labels])
        yield xb, labels.astype(np.int32)


def make_model():
    inp = keras.Input(shape=(N_FEAT,))
    x = keras.layers.BatchNormalization()(inp)
    x = keras.layers.Dense(1536, activation="relu")(x)
    x = keras.layers.Dense(1536, activation="relu")(x)
    x = keras.layers.Dense(384, activation="relu")(x)
    out = keras.layers.Dense(4, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(ds):
    keras.utils.set_random_seed(7)
    model = make_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0, shuffle=False)
    return timer.seconds_per_step()


sig = (tf.TensorSpec((None, N_FEAT), tf.float32), tf.TensorSpec((None,), tf.int32))
ds = tf.data.Dataset.from_generator(lambda: vibration_batches(11), output_signature=sig)
full = train(ds)
emit({"steps_per_second": 1.0 / full})
print(f"[washerdrum] normal: {full*1000:.1f} ms/step, {1/full:.2f} steps/s, wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    one = next(vibration_batches(11))
    ds1 = tf.data.Dataset.from_tensors(one).repeat()
    compute = train(ds1)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[washerdrum] truth: compute {compute*1000:.1f} ms/step, full {full*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
