"""Retail demand forecasting with gated residual networks (TFT-style GRN blocks plus self-attention). Sales windows are generated in memory and fed with tf.data from_tensor_slices/prefetch to model.fit; the step time is GRN and attention math."""
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

BATCH, STEPS, EPOCHS = 128, 60, 3
T, F, D = 48, 16, 128


def grn(x):
    a = keras.layers.Dense(D, activation="elu")(x)
    a = keras.layers.Dense(D)(a)
    g = keras.layers.Dense(D, activation="sigmoid")(a)
    return keras.layers.LayerNormalization()(x + g * keras.layers.Dense(D)(a))


def build():
    inp = keras.Input((T, F))
    h = keras.layers.Dense(D)(inp)
    for _ in range(4):
        h = grn(h)
        h = keras.layers.LayerNormalization()(h + keras.layers.MultiHeadAttention(4, 32)(h, h))
    out = keras.layers.Dense(1)(keras.layers.GlobalAveragePooling1D()(h))
    m = keras.Model(inp, out)
    m.compile("adam", "mse")
    return m


rng = np.random.default_rng(45)
X = rng.normal(size=(BATCH * STEPS, T, F)).astype(np.float32)
Y = X[:, -7:, 0].mean(1, keepdims=True).astype(np.float32)


def run(ds):
    keras.utils.set_random_seed(45)
    m, timer = build(), StepTimer()
    m.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


tmp = tempfile.mkdtemp(prefix="u45_compute_grn_retail_")
try:
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(BATCH).repeat().prefetch(2)
    full = run(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"grn full {full*1000:.1f} ms/step"
    if TRUTH:
        comp = run(tf.data.Dataset.from_tensors((X[:BATCH], Y[:BATCH])).repeat())
        f = fraction(full, comp)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth {f:.2f}"
    print(msg)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
