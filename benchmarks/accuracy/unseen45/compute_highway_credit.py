"""Credit default scoring with a 16-layer highway network. Tabular applicant features are generated in memory as tensors and sliced per step; training is a custom @tf.function GradientTape loop whose time is the deep gated MLP."""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))


def fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

def train_loop(model, opt, loss_fn, get_batch, epochs, steps):
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    gaps = []
    for e in range(epochs):
        last = None
        for s in range(steps):
            x, y = get_batch(e * steps + s)
            lv = float(step(x, y))
            t = time.perf_counter()
            if last is not None:
                gaps.append(t - last)
            last = t
    g = gaps[5:] or gaps
    return float(np.mean(g))

BATCH, STEPS, EPOCHS = 256, 60, 3
DEPTH, WIDTH = 16, 512


class Highway(keras.layers.Layer):
    def build(self, shape):
        self.h = keras.layers.Dense(WIDTH, activation="relu")
        self.t = keras.layers.Dense(WIDTH, activation="sigmoid", bias_initializer=keras.initializers.Constant(-2.0))

    def call(self, x):
        g = self.t(x)
        return g * self.h(x) + (1 - g) * x


def build():
    inp = keras.Input((120,))
    h = keras.layers.Dense(WIDTH, activation="relu")(inp)
    for _ in range(DEPTH):
        h = Highway()(h)
    return keras.Model(inp, keras.layers.Dense(1)(h))


rng = np.random.default_rng(45)
X = rng.normal(size=(BATCH * 20, 120)).astype(np.float32)
Y = (X[:, :5].sum(1, keepdims=True) > 0).astype(np.float32)
Xt, Yt = tf.constant(X), tf.constant(Y)


def get_batch(i):
    j = (i % 20) * BATCH
    return Xt[j:j + BATCH], Yt[j:j + BATCH]


def run(getter):
    keras.utils.set_random_seed(45)
    return train_loop(build(), keras.optimizers.Adam(1e-3), keras.losses.BinaryCrossentropy(from_logits=True), getter, EPOCHS, STEPS)


tmp = tempfile.mkdtemp(prefix="u45_compute_highway_credit_")
try:
    full = run(get_batch)
    emit({"steps_per_second": 1.0 / full})
    msg = f"highway full {full*1000:.1f} ms/step"
    if TRUTH:
        fixed = get_batch(0)
        comp = run(lambda i: fixed)
        f = fraction(full, comp)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth {f:.2f}"
    print(msg)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
