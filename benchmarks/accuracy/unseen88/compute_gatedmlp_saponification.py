"""Soap saponification batch records -> bar quality profile.

Each cold-process soap batch records its oil blend (olive, coconut, palm,
shea, castor, ...), lye concentration, superfat, water ratio, trace time and
curing temperatures.  A gated MLP predicts hardness, cleansing, conditioning,
bubbly, creamy and iodine scores.  Batches are pre-built tensors; a custom
@tf.function GradientTape loop does the training.
"""
import time; T0 = time.perf_counter()
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


BATCH, STEPS, WIDTH, BLOCKS = 512, 110, 768, 4
OILS = ["olive", "coconut", "palm", "shea", "castor", "cocoa", "sunflower", "avocado",
        "almond", "jojoba", "lard", "tallow", "babassu", "rice_bran", "hemp", "mango"]
SAP_NAOH = np.array([0.135, 0.183, 0.142, 0.128, 0.128, 0.137, 0.134, 0.133,
                     0.136, 0.069, 0.138, 0.143, 0.175, 0.128, 0.135, 0.137], np.float32)


def make_records(n, seed=88):
    rng = np.random.default_rng(seed)
    blend = rng.dirichlet(np.full(len(OILS), 0.4), n).astype(np.float32)
    superfat = rng.uniform(0.02, 0.08, (n, 1)).astype(np.float32)
    water = rng.uniform(0.28, 0.38, (n, 1)).astype(np.float32)
    trace_min = rng.uniform(3, 40, (n, 1)).astype(np.float32)
    cure_c = rng.uniform(18, 30, (n, 1)).astype(np.float32)
    lye = (blend @ SAP_NAOH)[:, None] * (1 - superfat)
    x = np.concatenate([blend, superfat * 10, water, trace_min / 40, cure_c / 30, lye * 5], 1)
    w = rng.normal(0, 1, (x.shape[1], 6)).astype(np.float32)
    y = np.tanh(x @ w) + 0.05 * rng.standard_normal((n, 6)).astype(np.float32)
    return x.astype(np.float32), y.astype(np.float32)


def build_model(d_in):
    keras.utils.set_random_seed(88)
    inp = keras.Input((d_in,))
    h = layers.Dense(WIDTH)(inp)
    for _ in range(BLOCKS):
        g = layers.Dense(WIDTH * 2)(layers.LayerNormalization()(h))
        a, b = layers.Lambda(lambda t: tf.split(t, 2, axis=-1))(g)
        h = layers.Add()([h, layers.Dense(WIDTH)(layers.Multiply()([a, layers.Activation("gelu")(b)]))])
    return keras.Model(inp, layers.Dense(6)(h))


X, Y = make_records(BATCH * 16)
BATCHES = [(tf.constant(X[i:i + BATCH]), tf.constant(Y[i:i + BATCH])) for i in range(0, len(X), BATCH)]


def train(batch_at):
    model = build_model(X.shape[1])
    opt = keras.optimizers.Adam(3e-4)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = batch_at(step)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss


full, last_loss = train(lambda s: BATCHES[s % len(BATCHES)])
emit({"steps_per_second": 1.0 / full})
print(f"[saponification] {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step) loss {last_loss:.4f} wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    fixed = BATCHES[0]
    compute, _ = train(lambda s: fixed)
    F = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": F})
    print(f"[saponification] truth: full {full * 1000:.1f} ms, compute {compute * 1000:.1f} ms, input fraction {F:.3f}")
