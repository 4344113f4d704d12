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

# Sea-surface temperature anomaly patches (32x32, 4 channels: SST, SST gradient,
# chlorophyll proxy, land mask) held in memory as a tf.data pipeline (from_tensor_slices,
# cache, shuffle, prefetch). model.fit trains a deep separable-convolution network that
# classifies marine-heatwave onset. Bottleneck: the model's compute.
BATCH = 16
STEPS = 15
EPOCHS = 2
H = W = 32
N = 320
rng0 = np.random.default_rng(64007)
yy, xx = np.mgrid[0:H, 0:W] / float(H)
X = np.empty((N, H, W, 4), np.float32)
Y = rng0.integers(0, 3, N).astype(np.int32)
for i in range(N):
    k = rng0.uniform(2, 8, 2)
    sst = np.sin(k[0] * xx + k[1] * yy) + 0.5 * Y[i] * np.exp(-((xx - 0.5) ** 2 + (yy - 0.5) ** 2) * 10)
    X[i, ..., 0] = sst + rng0.normal(0, 0.1, (H, W))
    X[i, ..., 1] = np.gradient(sst, axis=0)
    X[i, ..., 2] = rng0.gamma(2.0, 0.5, (H, W))
    X[i, ..., 3] = (xx + yy > 1.7).astype(np.float32)


def make_ds():
    return tf.data.Dataset.from_tensor_slices((X, Y)).cache().shuffle(N, seed=1).repeat().batch(BATCH).prefetch(4)


def build_model():
    keras.utils.set_random_seed(64)
    inp = keras.Input((H, W, 4))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    for ch in (32, 48):
        y = keras.layers.SeparableConv2D(ch, 3, padding="same", activation="relu")(x)
        y = keras.layers.SeparableConv2D(ch, 3, padding="same")(y)
        y = keras.layers.BatchNormalization()(y)
        x = keras.layers.Conv2D(ch, 1)(x) if x.shape[-1] != ch else x
        x = keras.layers.Activation("relu")(keras.layers.Add()([x, y]))
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.SeparableConv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(3)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


full = run(make_ds())
emit({"steps_per_second": 1.0 / full})
print("seasurfacetemp sepconv fit: %.4f s/step, %.2f steps/s, wall %.1f s" % (full, 1.0 / full, time.perf_counter() - WALL0))
if TRUTH:
    batch = next(iter(make_ds()))
    comp = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - comp) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print("truth: full %.4f compute %.4f fraction %.3f" % (full, comp, frac))
