"""Passive-acoustic whale-call detection from hydrophone clips.
Clips are written as Sun/NeXT .au files (big-endian 16-bit PCM); a Python generator parses each
header with struct, decodes the samples, computes a log band spectrogram plus a per-frame
autocorrelation pitch track, and feeds model.fit through tf.data.Dataset.from_generator."""
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

NAME = "input_sunau_fromgen_whalecalls"
SR, N, FR, HOP, B, STEPS, EPOCHS = 4000, 8000, 256, 128, 32, 72, 3
NF = 1 + (N - FR) // HOP
tmp = tempfile.mkdtemp(prefix="u52_%s_" % NAME)
try:
    rng = np.random.default_rng(0)
    t = np.arange(N) / SR
    files = []
    for i in range(256):
        y = i % 2
        sig = 0.4 * rng.standard_normal(N)
        if y:
            f0 = rng.uniform(150, 400)
            sig += np.sin(2 * np.pi * (f0 + 80 * t) * t)
        pcm = (np.clip(sig / 3, -1, 1) * 32767).astype(">i2").tobytes()
        p = os.path.join(tmp, "clip%04d.au" % i)
        with open(p, "wb") as f:
            f.write(struct.pack(">4sIIIII", b".snd", 24, len(pcm), 3, SR, 1) + pcm)
        files.append((p, y))
    fb = np.zeros((FR // 2 + 1, 40), np.float32)
    for m in range(40):
        fb[m * 3:m * 3 + 6, m] = 1.0
    win = np.hanning(FR)

    def load(path):
        with open(path, "rb") as f:
            raw = f.read()
        _, off, size, enc, sr, ch = struct.unpack(">4sIIIII", raw[:24])
        x = np.frombuffer(raw[off:off + size], dtype=">i2").astype(np.float32) / 32768.0
        x = np.append(x[0], x[1:] - 0.97 * x[:-1])
        fr = np.lib.stride_tricks.sliding_window_view(x, FR)[::HOP] * win
        spec = np.log((np.abs(np.fft.rfft(fr, axis=1)) ** 2) @ fb + 1e-6)
        pitch = np.empty(NF, np.float32)
        for k in range(NF):
            ac = np.correlate(fr[k], fr[k], "full")[FR - 1:]
            pitch[k] = sr / (10 + int(np.argmax(ac[10:120])))
        return np.concatenate([spec, pitch[:, None] / 400.0], axis=1).astype(np.float32)[..., None]

    def gen():
        r = np.random.default_rng(1)
        while True:
            for j in r.permutation(len(files)):
                p, y = files[j]
                yield load(p), np.float32(y)

    def make_model():
        keras.utils.set_random_seed(0)
        m = keras.Sequential([keras.Input((NF, 41, 1)),
            keras.layers.Conv2D(16, 3, activation="relu", padding="same"),
            keras.layers.Conv2D(24, 3, activation="relu", padding="same"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(64, 3, activation="relu", padding="same"),
            keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(1, activation="sigmoid")])
        m.compile("adam", "binary_crossentropy", metrics=["accuracy"])
        return m

    sig = (tf.TensorSpec((NF, 41, 1), tf.float32), tf.TensorSpec((), tf.float32))
    ds = tf.data.Dataset.from_generator(gen, output_signature=sig).batch(B).prefetch(2)
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
