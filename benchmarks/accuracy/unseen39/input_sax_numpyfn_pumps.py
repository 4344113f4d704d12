"""Fault classification for water-utility pump vibration using SAX symbolic features.

Raw 2048-sample vibration records live in memory; a tf.data pipeline maps a
np.numpy_function over each record (serial map) that z-normalises sliding
windows, reduces them with Piecewise Aggregate Approximation, discretises to
SAX words with Gaussian breakpoints and counts the word histogram fed to model.fit.
"""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS = 32, 70, 2
N_REC, LEN = 1500, 2048
WIN, HOP, SEG, ALPHA = 128, 64, 4, 5
BREAKS = np.array([-0.8416, -0.2533, 0.2533, 0.8416], np.float32)
NWORDS = ALPHA ** SEG


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_records(rng):
    t = np.arange(LEN) / 1024.0
    labels = rng.integers(0, 4, N_REC)
    x = np.empty((N_REC, LEN), np.float32)
    for i, c in enumerate(labels):
        f0 = 24.0 + rng.normal(0, 1)
        sig = np.sin(2 * np.pi * f0 * t) + 0.3 * np.sin(2 * np.pi * 2 * f0 * t)
        if c == 1:   # cavitation: broadband bursts
            sig += rng.normal(0, 1, LEN) * (np.sin(2 * np.pi * 3 * t) > 0.7)
        elif c == 2:  # bearing defect: periodic impulses
            sig[::int(rng.integers(60, 90))] += 4.0
        elif c == 3:  # misalignment: strong 2x harmonic
            sig += 1.2 * np.sin(2 * np.pi * 2 * f0 * t + 0.5)
        x[i] = sig + rng.normal(0, 0.3, LEN)
    return x, labels.astype(np.int32)


def sax_histogram(rec):
    hist = np.zeros(NWORDS + 3, np.float32)
    step = WIN // SEG
    prev = -1
    changes = 0
    for start in range(0, LEN - WIN + 1, HOP):
        w = rec[start:start + WIN]
        sd = w.std()
        z = (w - w.mean()) / (sd if sd > 1e-6 else 1.0)
        paa = [z[k * step:(k + 1) * step].mean() for k in range(SEG)]
        code = 0
        for v in paa:
            code = code * ALPHA + int(np.searchsorted(BREAKS, v))
        if code != prev:   # numerosity reduction, as in the SAX-VSM recipe
            hist[code] += 1.0
            changes += 1
        prev = code
    hist[:NWORDS] /= max(changes, 1)
    hist[NWORDS] = rec.std()
    hist[NWORDS + 1] = np.abs(rec).max() / 5.0
    hist[NWORDS + 2] = changes / 30.0
    return hist


def build_model():
    inp = keras.Input((NWORDS + 3,))
    x = keras.layers.Dense(2048, activation="relu")(inp)
    x = keras.layers.Dense(2048, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(4, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(39)
    tf.random.set_seed(39)
    tmp = tempfile.mkdtemp(prefix="u39_input_sax_numpyfn_pumps_")
    try:
        x, y = make_records(rng)

        def featurise(rec, label):
            h = tf.numpy_function(sax_histogram, [rec], tf.float32)
            h.set_shape((NWORDS + 3,))
            return h, label

        ds = (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_REC, seed=39).repeat()
              .map(featurise).batch(BATCH).prefetch(2))
        model = build_model()
        st = StepTimer()
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[st], verbose=0)
        full = st.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"input_sax_numpyfn_pumps: {1.0/full:.1f} steps/s"
        if truth:
            batch = next(iter(ds))
            m2 = build_model()
            st2 = StepTimer()
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
                   steps_per_epoch=STEPS, callbacks=[st2], verbose=0)
            comp = st2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
