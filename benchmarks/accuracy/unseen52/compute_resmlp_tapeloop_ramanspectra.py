"""Mineral identification from Raman spectra split into wavenumber patches.
Spectra are synthesised as in-memory numpy arrays (Lorentzian peaks plus a fluorescence baseline)
and sliced per step in a Python loop; a @tf.function GradientTape step trains a ResMLP (affine
normalisation, cross-patch linear mixing, per-patch MLP) and dominates the step time."""
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

NAME = "compute_resmlp_tapeloop_ramanspectra"
P, PD, D, B, STEPS, NCLS = 32, 64, 96, 32, 250, 12


class Affine(keras.layers.Layer):
    def build(self, shape):
        self.a = self.add_weight(shape=(shape[-1],), initializer="ones")
        self.b = self.add_weight(shape=(shape[-1],), initializer="zeros")
    def call(self, x):
        return x * self.a + self.b


def make_model():
    keras.utils.set_random_seed(0)
    inp = keras.Input((P, PD))
    x = keras.layers.Dense(D)(inp)
    for _ in range(6):
        h = Affine()(x)
        h = keras.layers.Permute((2, 1))(h)
        h = keras.layers.Dense(P)(h)
        x = x + keras.layers.Permute((2, 1))(h)
        h = Affine()(x)
        x = x + keras.layers.Dense(D)(keras.layers.Dense(4 * D, activation="gelu")(h))
    x = keras.layers.GlobalAveragePooling1D()(Affine()(x))
    return keras.Model(inp, keras.layers.Dense(NCLS)(x))


rng = np.random.default_rng(0)
n = 2048
wn = np.linspace(0, 1, P * PD)
Y = rng.integers(0, NCLS, n).astype(np.int32)
centres = rng.uniform(0.05, 0.95, (NCLS, 4))
X = np.empty((n, P * PD), np.float32)
for i in range(n):
    c = centres[Y[i]]
    X[i] = (sum(1 / (1 + ((wn - cc) / 0.004) ** 2) for cc in c) + rng.uniform(0, 2) * wn
            + 0.05 * rng.standard_normal(P * PD))
X = X.reshape(n, P, PD)


def train(get):
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
        x, y = get(s)
        loss = float(step(x, y))
        times.append(time.perf_counter())
    return sec_per_step(list(np.diff(times))), loss


t0 = time.perf_counter()
perm = rng.permutation(n)
def get(s):
    idx = perm[(s * B) % n:(s * B) % n + B]
    return X[idx], Y[idx]
full, loss = train(get)
emit({"steps_per_second": 1.0 / full})
msg = "%s: loss=%.3f %.2f steps/s" % (NAME, loss, 1.0 / full)
if TRUTH:
    fixed = (X[:B].copy(), Y[:B].copy())
    comp, _ = train(lambda s: fixed)
    Fr = truth_fraction(full, comp)
    emit({"truth_input_fraction": Fr})
    msg += " truth=%.3f" % Fr
print(msg + " wall=%.1fs" % (time.perf_counter() - t0))
