"""Frame-level phoneme classification for a speech front end.
Log-mel feature sequences and phoneme labels are generated in memory as numpy arrays and fed to
model.fit directly; the step cost is the Conformer block math (multi-head self-attention plus a
gated depthwise-convolution module and macaron feed-forward layers)."""
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

NAME = "compute_conformer_fit_phonemes"
T, F, D, B, STEPS, EPOCHS = 128, 40, 128, 32, 14, 3


def conformer_block(x):
    ff = lambda h: keras.layers.Dense(D)(keras.layers.Dense(4 * D, activation="swish")(keras.layers.LayerNormalization()(h)))
    x = x + 0.5 * ff(x)
    h = keras.layers.LayerNormalization()(x)
    x = x + keras.layers.MultiHeadAttention(4, D // 4)(h, h)
    h = keras.layers.LayerNormalization()(x)
    h = keras.layers.Dense(2 * D)(h)
    a, g = keras.ops.split(h, 2, axis=-1)
    h = a * keras.ops.sigmoid(g)
    h = keras.layers.DepthwiseConv1D(15, padding="same")(h)
    h = keras.layers.Dense(D)(keras.ops.swish(keras.layers.BatchNormalization()(h)))
    x = x + h
    x = x + 0.5 * ff(x)
    return keras.layers.LayerNormalization()(x)


def make_model():
    keras.utils.set_random_seed(0)
    inp = keras.Input((T, F))
    x = keras.layers.Dense(D)(inp)
    for _ in range(3):
        x = conformer_block(x)
    m = keras.Model(inp, keras.layers.Dense(40, activation="softmax")(x))
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


rng = np.random.default_rng(0)
n = B * STEPS
X = rng.standard_normal((n, T, F)).astype(np.float32)
Y = rng.integers(0, 40, (n, T)).astype(np.int32)
t0 = time.perf_counter()
timer = StepTimer()
h = make_model().fit(X, Y, batch_size=B, epochs=EPOCHS, shuffle=True, callbacks=[timer], verbose=0)
full = sec_per_step(timer.gaps)
emit({"steps_per_second": 1.0 / full})
msg = "%s: acc=%.3f %.2f steps/s" % (NAME, h.history["accuracy"][-1], 1.0 / full)
if TRUTH:
    t2 = StepTimer()
    ds = tf.data.Dataset.from_tensors((X[:B], Y[:B])).repeat()
    make_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[t2], verbose=0)
    Fr = truth_fraction(full, sec_per_step(t2.gaps))
    emit({"truth_input_fraction": Fr})
    msg += " truth=%.3f" % Fr
print(msg + " wall=%.1fs" % (time.perf_counter() - t0))
