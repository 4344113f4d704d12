"""Seizure detection on scalp EEG windows.
Training windows are in-memory numpy arrays fed to a short model.fit; at each epoch end a callback
runs model.predict over every overlapping 2-second window of a long held-out recording and computes
event-level sensitivity and false alarms per hour, which dominates the wall time."""
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

NAME = "eval_windowpredict_callback_seizureeeg"
T, C, B, STEPS, EPOCHS = 256, 8, 64, 30, 3
rng = np.random.default_rng(0)
n = B * STEPS
t = np.arange(T) / 128.0
Y = rng.integers(0, 2, n).astype(np.float32)
X = (0.8 * rng.standard_normal((n, T, C)) + Y[:, None, None] * np.sin(2 * np.pi * 3 * t)[None, :, None]).astype(np.float32)
rec_len = 128 * 3600 * 12
rec = (0.8 * rng.standard_normal((rec_len, C))).astype(np.float32)
truth_ev = np.zeros(rec_len, bool)
for s in rng.integers(0, rec_len - 4000, 40):
    rec[s:s + 3000] += np.sin(2 * np.pi * 3 * np.arange(3000) / 128.0)[:, None]
    truth_ev[s:s + 3000] = True
hop = 32
Xh = np.lib.stride_tricks.sliding_window_view(rec, T, axis=0)[::hop].transpose(0, 2, 1)
starts = np.arange(len(Xh)) * hop


class EventScore(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        p = self.model.predict(Xh, batch_size=512, verbose=0)[:, 0] > 0.5
        lab = truth_ev[starts + T // 2]
        self.sens = float((p & lab).sum() / max(lab.sum(), 1))
        self.fa = float((p & ~lab).sum() / (rec_len / 128 / 3600))


def make_model():
    keras.utils.set_random_seed(0)
    m = keras.Sequential([keras.Input((T, C)),
        keras.layers.Conv1D(32, 7, strides=2, activation="relu"),
        keras.layers.Conv1D(32, 7, strides=2, activation="relu"),
        keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1, activation="sigmoid")])
    m.compile("adam", "binary_crossentropy")
    return m


t0 = time.perf_counter()
timer, ev = StepTimer(), EventScore()
make_model().fit(X, Y, batch_size=B, epochs=EPOCHS, callbacks=[timer, ev], verbose=0)
full = sec_per_step(timer.gaps)
emit({"steps_per_second": 1.0 / full})
msg = "%s: sens=%.3f fa/h=%.1f windows=%d %.1f steps/s" % (NAME, ev.sens, ev.fa, len(Xh), 1.0 / full)
if TRUTH:
    t2 = StepTimer()
    ds = tf.data.Dataset.from_tensors((X[:B], Y[:B])).repeat()
    make_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[t2, EventScore()], verbose=0)
    Fr = truth_fraction(full, sec_per_step(t2.gaps))
    emit({"truth_input_fraction": Fr})
    msg += " truth=%.3f" % Fr
print(msg + " wall=%.1fs" % (time.perf_counter() - t0))
