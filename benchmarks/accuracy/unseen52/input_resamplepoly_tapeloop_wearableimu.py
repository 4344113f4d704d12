"""Activity recognition from mixed wearable IMUs recorded at different native rates.
Each batch is assembled in Python: per-device 3-axis accelerometer bursts at 50/100/104/200 Hz
are resampled to 64 Hz with scipy.signal.resample_poly, band-passed with a Butterworth sosfiltfilt
and stacked with the magnitude channel; a @tf.function GradientTape step trains in a Python loop."""
import os, sys, json, time, struct, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each batch end; gaps only within an epoch."""
    def on_train_begin(self, logs=None):
        self.gaps = []
        self.t = None
    def on_epoch_begin(self, epoch, logs=None):
        self.t = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.t is not None:
            self.gaps.append(now - self.t)
        self.t = now


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

from scipy import signal
from fractions import Fraction
NAME = "input_resamplepoly_tapeloop_wearableimu"
B, STEPS, OUT_T = 32, 400, 256
RATES = [50, 100, 104, 200]
SOS = signal.butter(4, [0.3, 20], btype="band", fs=64, output="sos")
tmp = tempfile.mkdtemp(prefix="u52_%s_" % NAME)


def make_batch(rng):
    xs = np.empty((B, OUT_T, 4), np.float32)
    ys = rng.integers(0, 6, B)
    for i, y in enumerate(ys):
        fs = RATES[rng.integers(0, 4)]
        n = int(OUT_T * fs / 64) + 8
        tt = np.arange(n) / fs
        raw = (np.sin(2 * np.pi * (0.8 + 0.5 * y) * tt)[:, None] * rng.uniform(0.5, 2, 3)
               + 0.5 * rng.standard_normal((n, 3)))
        fr = Fraction(64, fs)
        rs = signal.resample_poly(raw, fr.numerator, fr.denominator, axis=0)[:OUT_T]
        rs = signal.sosfiltfilt(SOS, rs, axis=0)
        xs[i, :, :3] = rs
        xs[i, :, 3] = np.linalg.norm(rs, axis=1)
    return xs, ys.astype(np.int32)


def make_model():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((OUT_T, 4)),
        keras.layers.Conv1D(64, 7, padding="same", activation="relu"),
        keras.layers.Conv1D(64, 7, padding="same", activation="relu"),
        keras.layers.Conv1D(64, 7, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(6)])


def train(batches):
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    times, loss = [], 0.0
    for s in range(STEPS):
        x, y = batches()
        loss = float(step(x, y))
        times.append(time.perf_counter())
    return sec_per_step(list(np.diff(times))), loss


try:
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    full, loss = train(lambda: make_batch(rng))
    emit({"steps_per_second": 1.0 / full})
    msg = "%s: loss=%.3f %.1f steps/s" % (NAME, loss, 1.0 / full)
    if TRUTH:
        fixed = make_batch(np.random.default_rng(9))
        comp, _ = train(lambda: fixed)
        F = truth_fraction(full, comp)
        emit({"truth_input_fraction": F})
        msg += " truth=%.3f" % F
    print(msg + " wall=%.1fs" % (time.perf_counter() - t0))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
