import os, sys, time, json, tempfile, shutil
WALL0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter gaps between consecutive train batches within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

# Stellar light curves (TESS-like, 128 cadences folded into 64 tokens of 2 features)
# for variable-star classification. Batches are pre-built tensors kept in memory; a
# custom GradientTape loop (tf.function) trains a 2-block transformer encoder.
# Bottleneck: attention/MLP compute.
BATCH = 16
STEPS = 30
SEQ = 64
D = 64
N_BATCHES = 8
rng0 = np.random.default_rng(64008)


def make_curves(n, rng):
    t = np.linspace(0, 27.0, SEQ * 2)
    xs, ys = [], []
    for _ in range(n):
        cls = int(rng.integers(0, 5))
        per = rng.uniform(0.3, 10)
        f = 1 + 0.01 * (cls + 1) * np.sin(2 * np.pi * t / per) + rng.normal(0, 0.002, t.size)
        xs.append(f.reshape(SEQ, 2))
        ys.append(cls)
    return np.asarray(xs, np.float32), np.asarray(ys, np.int32)


BATCHES = [tuple(tf.constant(a) for a in make_curves(BATCH, rng0)) for _ in range(N_BATCHES)]


def build_model():
    keras.utils.set_random_seed(64)
    inp = keras.Input((SEQ, 2))
    x = keras.layers.Dense(D)(inp)
    for _ in range(2):
        a = keras.layers.MultiHeadAttention(4, D // 4)(x, x)
        x = keras.layers.LayerNormalization()(x + a)
        f = keras.layers.Dense(4 * D, activation="gelu")(x)
        x = keras.layers.LayerNormalization()(x + keras.layers.Dense(D)(f))
    out = keras.layers.Dense(5)(keras.layers.GlobalAveragePooling1D()(x))
    return keras.Model(inp, out)


def run(fixed=None):
    model = build_model()
    opt = keras.optimizers.Adam(3e-4)
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last = [], None
    for i in range(STEPS):
        x, y = fixed if fixed is not None else BATCHES[i % N_BATCHES]
        loss = float(step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return sec_per_step(gaps), loss


full, loss = run()
emit({"steps_per_second": 1.0 / full})
print("lightcurves transformer tape loop: %.4f s/step, %.2f steps/s, loss %.4f, wall %.1f s" % (full, 1.0 / full, loss, time.perf_counter() - WALL0))
if TRUTH:
    comp, _ = run(BATCHES[0])
    frac = min(max((full - comp) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print("truth: full %.4f compute %.4f fraction %.3f" % (full, comp, frac))
