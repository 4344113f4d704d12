import time
T0 = time.perf_counter()
import os, sys, json, re, math, tempfile, shutil, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import warnings
warnings.filterwarnings("ignore")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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

# ---- compute_mlpmixer_tapeloop_polymerspectra: FTIR spectra of polymer blends,
# pre-batched once into tf tensors in memory; a wide MLP-Mixer trained with a
# custom tf.GradientTape loop is the bottleneck.
BATCH = 16
STEPS = 150
PATCHES = 64
PATCH_DIM = 32
WIDTH = 64
BLOCKS = 3


def make_spectra(n, seed=70):
    rng = np.random.default_rng(seed)
    wn = np.linspace(400, 4000, PATCHES * PATCH_DIM)
    peaks = {"PE": [2915, 2848, 1470, 720], "PP": [2950, 2917, 1456, 1376, 1166],
             "PET": [1715, 1245, 1100, 725], "PA6": [3300, 1640, 1540], "PVC": [1425, 1250, 690]}
    names = list(peaks)
    xs = np.empty((n, PATCHES, PATCH_DIM), np.float32)
    ys = np.empty((n, len(names)), np.float32)
    for i in range(n):
        w = rng.dirichlet(np.ones(len(names)))
        s = np.zeros_like(wn)
        for k, nm in enumerate(names):
            for p in peaks[nm]:
                s += w[k] * np.exp(-((wn - p) / rng.uniform(8, 25)) ** 2)
        xs[i] = (s + rng.normal(0, 0.01, wn.shape)).reshape(PATCHES, PATCH_DIM)
        ys[i] = w
    return xs, ys


def mixer_block(x):
    y = keras.layers.LayerNormalization()(x)
    y = keras.layers.Permute((2, 1))(y)
    y = keras.layers.Dense(PATCHES * 2, activation="gelu")(y)
    y = keras.layers.Dense(PATCHES)(y)
    x = x + keras.layers.Permute((2, 1))(y)
    y = keras.layers.LayerNormalization()(x)
    y = keras.layers.Dense(WIDTH * 2, activation="gelu")(y)
    return x + keras.layers.Dense(WIDTH)(y)


def make_model():
    inp = keras.Input((PATCHES, PATCH_DIM))
    x = keras.layers.Dense(WIDTH)(inp)
    for _ in range(BLOCKS):
        x = mixer_block(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.Model(inp, keras.layers.Dense(5, activation="softmax")(x))


XS, YS = make_spectra(BATCH * 8)
BATCHES = [(tf.constant(XS[i * BATCH:(i + 1) * BATCH]), tf.constant(YS[i * BATCH:(i + 1) * BATCH])) for i in range(8)]


def train(get_batch):
    keras.utils.set_random_seed(70)
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.KLDivergence()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for s in range(STEPS):
        x, y = get_batch(s)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return sec_per_step(list(np.diff(stamps))), loss


def main():
    full, loss = train(lambda s: BATCHES[s % len(BATCHES)])
    sps = 1.0 / full
    emit({"steps_per_second": sps})
    print(f"[compute_mlpmixer_tapeloop_polymerspectra] full {full*1000:.1f} ms/step, {sps:.2f} steps/s, loss {loss:.4f}, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        fixed = BATCHES[0]
        comp, _ = train(lambda s: fixed)
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[compute_mlpmixer_tapeloop_polymerspectra] truth: compute {comp*1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
