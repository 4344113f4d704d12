"""Structural-health monitoring of a bridge from strain-gauge channels.
Each gauge's raw record is a .npy file; tf.data interleaves per-gauge from_generator readers that
slide a window over the record, run a scipy.signal sosfilt octave-band filter bank and return the
band-energy envelopes, which feed model.fit to classify the load/damage state."""
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
NAME = "input_octaveband_interleave_bridgestrain"
FS, WIN, HOP, B, STEPS, EPOCHS, NG = 512, 1024, 512, 32, 170, 3, 8
CENTERS = [4, 8, 16, 32, 64, 128]
BANK = [signal.butter(3, [c / 1.414, min(c * 1.414, 250)], btype="band", fs=FS, output="sos") for c in CENTERS]
tmp = tempfile.mkdtemp(prefix="u52_%s_" % NAME)
try:
    rng = np.random.default_rng(0)
    files = []
    for g in range(NG):
        n = 200 * HOP + WIN
        t = np.arange(n) / FS
        state = (np.arange(n) // (7 * HOP)) % 3
        x = (np.sin(2 * np.pi * (8 + 12 * state) * t) + 0.8 * rng.standard_normal(n)).astype(np.float32)
        np.save(os.path.join(tmp, "gauge%02d.npy" % g), x)
        np.save(os.path.join(tmp, "gauge%02d_state.npy" % g), state.astype(np.int32))
        files.append(os.path.join(tmp, "gauge%02d" % g))

    def gauge_reader(stem):
        x = np.load(stem.decode() + ".npy")
        st = np.load(stem.decode() + "_state.npy")
        while True:
            for s in range(0, len(x) - WIN, HOP):
                w = x[s:s + WIN]
                feats = []
                for sos in BANK:
                    b = signal.sosfilt(sos, w)
                    feats.append(np.sqrt(np.convolve(b * b, np.ones(16) / 16, "same"))[::8])
                yield np.stack(feats, 1).astype(np.float32), st[s + WIN // 2]

    sig = (tf.TensorSpec((WIN // 8, len(CENTERS)), tf.float32), tf.TensorSpec((), tf.int32))
    ds = (tf.data.Dataset.from_tensor_slices(files)
          .interleave(lambda f: tf.data.Dataset.from_generator(gauge_reader, output_signature=sig, args=(f,)),
                      cycle_length=4, block_length=4)
          .batch(B).prefetch(1))

    def make_model():
        keras.utils.set_random_seed(0)
        m = keras.Sequential([keras.Input((WIN // 8, len(CENTERS))),
            keras.layers.Conv1D(96, 5, padding="same", activation="relu"),
            keras.layers.Conv1D(96, 5, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(3, activation="softmax")])
        m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
        return m

    t0 = time.perf_counter()
    timer = StepTimer()
    h = make_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = sec_per_step(timer.gaps)
    emit({"steps_per_second": 1.0 / full})
    msg = "%s: acc=%.3f %.1f steps/s" % (NAME, h.history["accuracy"][-1], 1.0 / full)
    if TRUTH:
        xb, yb = next(iter(ds))
        t2 = StepTimer()
        make_model().fit(tf.data.Dataset.from_tensors((xb, yb)).repeat(), steps_per_epoch=STEPS,
                         epochs=EPOCHS, callbacks=[t2], verbose=0)
        F = truth_fraction(full, sec_per_step(t2.gaps))
        emit({"truth_input_fraction": F})
        msg += " truth=%.3f" % F
    print(msg + " wall=%.1fs" % (time.perf_counter() - t0))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
