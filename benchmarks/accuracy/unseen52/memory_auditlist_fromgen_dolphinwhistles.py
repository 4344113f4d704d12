"""Dolphin-whistle contour classification from hydrophone spectrograms.
A Python generator synthesises frequency-modulated whistles, computes STFT magnitude spectrograms
with numpy and feeds model.fit through tf.data.Dataset.from_generator; for a later QA audit the
generator also appends every spectrogram batch it yields to a list that is never trimmed."""
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

NAME = "memory_auditlist_fromgen_dolphinwhistles"
F, T, B, STEPS, EPOCHS = 128, 128, 64, 60, 4
audit = []


def gen():
    rng = np.random.default_rng(0)
    win = np.hanning(254)
    while True:
        xs = np.empty((B, F, T, 1), np.float32)
        ys = rng.integers(0, 4, B)
        for i, y in enumerate(ys):
            tt = np.arange(T * 64 + 254) / 48000.0
            f0 = 6000 + 2000 * y
            x = np.sin(2 * np.pi * (f0 * tt + 3000 * np.sin(2 * np.pi * 4 * tt) / (8 * np.pi))) + 0.5 * rng.standard_normal(tt.size)
            fr = np.lib.stride_tricks.sliding_window_view(x, 254)[::64][:T] * win
            xs[i, :, :, 0] = np.log1p(np.abs(np.fft.rfft(fr, axis=1)).T)
        audit.append((xs.copy(), ys.copy()))
        for i in range(B):
            yield xs[i], np.int32(ys[i])


def make_model():
    keras.utils.set_random_seed(0)
    m = keras.Sequential([keras.Input((F, T, 1)), keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
                          keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(4, activation="softmax")])
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


sig = (tf.TensorSpec((F, T, 1), tf.float32), tf.TensorSpec((), tf.int32))
ds = tf.data.Dataset.from_generator(gen, output_signature=sig).batch(B).prefetch(1)
t0 = time.perf_counter()
timer = StepTimer()
h = make_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
full = sec_per_step(timer.gaps)
emit({"steps_per_second": 1.0 / full})
msg = "%s: acc=%.3f audit_batches=%d %.1f steps/s" % (NAME, h.history["accuracy"][-1], len(audit), 1.0 / full)
if TRUTH:
    xb, yb = next(iter(ds))
    t2 = StepTimer()
    make_model().fit(tf.data.Dataset.from_tensors((xb, yb)).repeat(), steps_per_epoch=STEPS,
                     epochs=EPOCHS, callbacks=[t2], verbose=0)
    Fr = truth_fraction(full, sec_per_step(t2.gaps))
    emit({"truth_input_fraction": Fr})
    msg += " truth=%.3f" % Fr
print(msg + " wall=%.1fs" % (time.perf_counter() - t0))
