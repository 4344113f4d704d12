"""Telephone-keypad (DTMF) digit recognition from call recordings.
A keras.utils.PyDataset synthesises noisy 8 kHz keypad tones in memory, runs a pure-Python
Goertzel filter bank over 205-sample blocks for the eight DTMF frequencies, and hands the
block energies plus the raw waveform to model.fit."""
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

NAME = "input_goertzel_pydataset_dtmf"
SR, N, BLK, B, STEPS, EPOCHS = 8000, 2048, 205, 32, 60, 3
NB = N // BLK
LOW, HIGH = [697, 770, 852, 941], [1209, 1336, 1477, 1633]
FREQS = LOW + HIGH
COEF = [2 * np.cos(2 * np.pi * round(BLK * f / SR) / BLK) for f in FREQS]
tmp = tempfile.mkdtemp(prefix="u52_%s_" % NAME)


def goertzel(block):
    out = []
    for c in COEF:
        s1 = s2 = 0.0
        for v in block:
            s0 = v + c * s1 - s2
            s2 = s1
            s1 = s0
        out.append(s1 * s1 + s2 * s2 - c * s1 * s2)
    return out


class DTMFSet(keras.utils.PyDataset):
    def __init__(self, seed):
        super().__init__()
        self.rng = np.random.default_rng(seed)
    def __len__(self):
        return STEPS
    def __getitem__(self, idx):
        t = np.arange(N) / SR
        wav = np.empty((B, N, 1), np.float32)
        en = np.empty((B, NB, 8), np.float32)
        ys = self.rng.integers(0, 16, B)
        for i, y in enumerate(ys):
            x = (np.sin(2 * np.pi * LOW[y // 4] * t) + np.sin(2 * np.pi * HIGH[y % 4] * t)
                 + 0.8 * self.rng.standard_normal(N))
            wav[i, :, 0] = x
            for k in range(NB):
                en[i, k] = goertzel(x[k * BLK:(k + 1) * BLK].tolist())
        return (wav, np.log1p(en)), ys.astype(np.int32)


def make_model():
    keras.utils.set_random_seed(0)
    w = keras.Input((N, 1)); e = keras.Input((NB, 8))
    h = keras.layers.Conv1D(48, 9, strides=2, activation="relu")(w)
    h = keras.layers.Conv1D(32, 9, activation="relu")(h)
    h = keras.layers.Conv1D(64, 9, strides=2, activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    g = keras.layers.Flatten()(e)
    o = keras.layers.Dense(16, activation="softmax")(keras.layers.Concatenate()([h, g]))
    m = keras.Model([w, e], o)
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


try:
    t0 = time.perf_counter()
    timer = StepTimer()
    h = make_model().fit(DTMFSet(0), epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = sec_per_step(timer.gaps)
    emit({"steps_per_second": 1.0 / full})
    msg = "%s: acc=%.3f %.1f steps/s" % (NAME, h.history["accuracy"][-1], 1.0 / full)
    if TRUTH:
        (xw, xe), yb = DTMFSet(5)[0]
        t2 = StepTimer()
        ds = tf.data.Dataset.from_tensors(((xw, xe), yb)).repeat()
        make_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[t2], verbose=0)
        F = truth_fraction(full, sec_per_step(t2.gaps))
        emit({"truth_input_fraction": F})
        msg += " truth=%.3f" % F
    print(msg + " wall=%.1fs" % (time.perf_counter() - t0))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
