"""Wind-tunnel / CFD surface-pressure probes for flow-regime classification.
Each run is saved as a Fortran unformatted sequential file (int32 record markers around float64
records, one record per time step); a serial tf.data map calls tf.numpy_function that walks the
records with struct.unpack_from and computes per-probe spectral band powers for model.fit."""
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

NAME = "input_f77records_numpyfn_cfdprobes"
NT, NP, B, STEPS, EPOCHS = 512, 24, 32, 120, 3
tmp = tempfile.mkdtemp(prefix="u52_%s_" % NAME)
try:
    rng = np.random.default_rng(0)
    paths, labels = [], []
    tt = np.arange(NT) / 256.0
    for i in range(192):
        y = i % 4
        with open(os.path.join(tmp, "run%04d.unf" % i), "wb") as f:
            hdr = struct.pack("<ii", NT, NP)
            f.write(struct.pack("<i", len(hdr)) + hdr + struct.pack("<i", len(hdr)))
            shed = 5 + 7 * y
            for k in range(NT):
                rec = (np.sin(2 * np.pi * shed * tt[k] + np.arange(NP) * 0.3)
                       + 0.7 * rng.standard_normal(NP)).astype("<f8").tobytes()
                f.write(struct.pack("<i", len(rec)) + rec + struct.pack("<i", len(rec)))
        paths.append(os.path.join(tmp, "run%04d.unf" % i)); labels.append(y)

    def parse(path):
        with open(path.decode(), "rb") as f:
            buf = f.read()
        off = 0
        n = struct.unpack_from("<i", buf, off)[0]
        nt, npb = struct.unpack_from("<ii", buf, off + 4)
        off += n + 8
        rows = []
        while off < len(buf):
            n = struct.unpack_from("<i", buf, off)[0]
            rows.append(struct.unpack_from("<%dd" % (n // 8), buf, off + 4))
            off += n + 8
        p = np.asarray(rows, np.float64)
        p -= p.mean(axis=0)
        segs = p[: (nt // 64) * 64].reshape(-1, 64, npb)
        psd = (np.abs(np.fft.rfft(segs * np.hanning(64)[None, :, None], axis=1)) ** 2).mean(axis=0)
        return np.log1p(psd).astype(np.float32)[..., None]  # (33, NP, 1)

    def make_model():
        keras.utils.set_random_seed(0)
        m = keras.Sequential([keras.Input((33, NP, 1)),
            keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
            keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
            keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(4, activation="softmax")])
        m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
        return m

    def tf_parse(p, y):
        x = tf.numpy_function(parse, [p], tf.float32)
        x.set_shape((33, NP, 1))
        return x, y

    ds = (tf.data.Dataset.from_tensor_slices((paths, labels)).shuffle(192, seed=0).repeat()
          .map(tf_parse).batch(B).prefetch(1))
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
