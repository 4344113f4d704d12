"""App-store review sentiment with an FNet encoder (Fourier-transform token mixing).
Token mixing uses the DFT-matrix form of the 2-D Fourier transform (Re(F_seq X F_hid) as two
real matmul pairs), as FNet does on accelerators. A synthetic corpus of tokenised reviews (sentiment-bearing tokens planted in Zipf-distributed
filler) is built once as int32 numpy arrays in memory and passed straight to model.fit; each
step runs token embedding, 2-D FFT mixing and feed-forward blocks.
"""
import os, sys, json, time, tempfile, shutil
import numpy as np
import tensorflow as tf
import keras

SEED = 44
BATCH = 32
SEQ = 128
VOCAB = 8000
DIM = 128
LAYERS = 4
STEPS = 24
EPOCHS = 3
ACC = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if ACC:
        with open(ACC, "a") as f:
            f.write(json.dumps(rec) + "\n")


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

    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def dft_parts(n):
    k = np.arange(n)
    ang = -2 * np.pi * np.outer(k, k) / n
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


class FourierMix(keras.layers.Layer):
    def __init__(self, **kw):
        super().__init__(**kw)
        cs, ss = dft_parts(SEQ)
        ch, sh = dft_parts(DIM)
        self.cs, self.ss, self.ch, self.sh = (tf.constant(a) for a in (cs, ss, ch, sh))

    def call(self, x):
        # Re(Fs X Fh) = Cs X Ch - Ss X Sh
        a = tf.einsum("st,btd->bsd", self.cs, x)
        b = tf.einsum("st,btd->bsd", self.ss, x)
        return tf.einsum("bsd,de->bse", a, self.ch) - tf.einsum("bsd,de->bse", b, self.sh)


def fnet_block(x):
    h = keras.layers.LayerNormalization()(x + FourierMix()(x))
    f = keras.layers.Dense(DIM * 4, activation="gelu")(h)
    f = keras.layers.Dense(DIM)(f)
    return keras.layers.LayerNormalization()(h + f)


def build_model():
    inp = keras.Input((SEQ,), dtype="int32")
    h = keras.layers.Embedding(VOCAB, DIM)(inp)
    pos = keras.layers.Embedding(SEQ, DIM)(keras.ops.arange(SEQ)[None, :])
    h = h + pos
    for _ in range(LAYERS):
        h = fnet_block(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    out = keras.layers.Dense(1, activation="sigmoid")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(3e-4), loss="binary_crossentropy", metrics=["accuracy"])
    return m


def make_corpus(n, rng):
    ranks = np.arange(1, VOCAB - 100)
    p = 1.0 / ranks
    p /= p.sum()
    x = (rng.choice(len(ranks), size=(n, SEQ), p=p) + 100).astype(np.int32)
    y = rng.integers(0, 2, n).astype(np.float32)
    for i in range(n):
        k = rng.integers(3, 12)
        pos = rng.integers(0, SEQ, k)
        x[i, pos] = rng.integers(1, 50, k) + (50 * y[i]).astype(np.int32)
    return x, y


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u44_compute_fnet_fit_reviews_")
    try:
        keras.utils.set_random_seed(SEED)
        x, y = make_corpus(BATCH * STEPS, np.random.default_rng(SEED))
        model = build_model()
        timer = StepTimer()
        hist = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.4f s/step" % full
        if truth:
            batch = (x[:BATCH], y[:BATCH])
            keras.utils.set_random_seed(SEED)
            model2 = build_model()
            t2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS,
                       callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, frac)
        print("compute_fnet_fit_reviews: acc %.3f, %s" % (hist.history["accuracy"][-1], msg))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
