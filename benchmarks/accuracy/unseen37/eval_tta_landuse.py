"""Land-use classification of multispectral satellite tiles with test-time augmentation.

Training tiles (RGB + near-infrared) live in memory and are served by a cached,
prefetched tf.data pipeline.  After every epoch a callback scores the held-out
test tiles under eight test-time augmentations (identity, flips, 90-degree
rotations, transpose, a 2-pixel shift) with model.predict and averages the
softmax outputs - this evaluation dominates the wall time.
"""
import argparse, json, os, shutil, tempfile, time
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 64
STEPS = 30
EPOCHS = 3
N_TRAIN = 4096
N_TEST = 3000
SIZE = 32
BANDS = 4
N_CLASSES = 8
TTA = [
    ("identity", lambda x: x),
    ("flip_lr", lambda x: x[:, :, ::-1]),
    ("flip_ud", lambda x: x[:, ::-1]),
    ("rot90", lambda x: np.rot90(x, 1, axes=(1, 2))),
    ("rot180", lambda x: np.rot90(x, 2, axes=(1, 2))),
    ("rot270", lambda x: np.rot90(x, 3, axes=(1, 2))),
    ("transpose", lambda x: np.swapaxes(x, 1, 2)),
    ("shift2", lambda x: np.roll(x, 2, axis=(1, 2))),
]


def make_tiles(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N_CLASSES, n)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / SIZE
    freq = 1 + y[:, None, None]
    texture = np.sin(2 * np.pi * freq * (xx[None] + yy[None]) + rng.uniform(0, 6, (n, 1, 1)))
    base = np.array([[0.2, 0.5, 0.2, 0.7], [0.5, 0.5, 0.4, 0.2], [0.1, 0.2, 0.6, 0.1], [0.6, 0.6, 0.6, 0.3],
                     [0.3, 0.6, 0.2, 0.8], [0.7, 0.4, 0.3, 0.2], [0.2, 0.3, 0.3, 0.5], [0.4, 0.4, 0.5, 0.6]])
    x = base[y][:, None, None, :] + 0.15 * texture[..., None] + 0.1 * rng.standard_normal((n, SIZE, SIZE, BANDS))
    return x.astype(np.float32), y.astype(np.int32)


class TTAEvaluator(keras.callbacks.Callback):
    def __init__(self, x_test, y_test):
        super().__init__()
        self.views = [np.ascontiguousarray(f(x_test)) for _, f in TTA]
        self.y_test = y_test
        self.seconds = 0.0
        self.scores = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        probs = np.zeros((len(self.y_test), N_CLASSES), np.float32)
        for view in self.views:
            probs += keras.ops.convert_to_numpy(
                keras.ops.softmax(self.model.predict(view, batch_size=64, verbose=0)))
        self.scores.append(float(np.mean(probs.argmax(1) == self.y_test)))
        self.seconds += time.perf_counter() - t


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def build_model():
    inp = keras.Input((SIZE, SIZE, BANDS))
    h = inp
    for f in (16, 32, 64):
        h = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(h)
        h = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(h)
        h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    return keras.Model(inp, keras.layers.Dense(N_CLASSES)(h))


def train(data, x_test, y_test):
    keras.utils.set_random_seed(1)
    model = build_model()
    model.compile(keras.optimizers.Adam(1e-3),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    timer, tta = StepTimer(), TTAEvaluator(x_test, y_test)
    t = time.perf_counter()
    model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, tta], verbose=0)
    return timer.sec_per_step(), tta, time.perf_counter() - t


def make_dataset(x, y):
    ds = tf.data.Dataset.from_tensor_slices((x, y)).cache().shuffle(N_TRAIN, seed=0).repeat()
    return ds.batch(BATCH, drop_remainder=True).prefetch(tf.data.AUTOTUNE)


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u37_eval_tta_landuse_")
    try:
        t0 = time.perf_counter()
        x, y = make_tiles(N_TRAIN, 0)
        x_test, y_test = make_tiles(N_TEST, 1)
        full, tta, fit_s = train(make_dataset(x, y), x_test, y_test)
        emit("steps_per_second", 1.0 / full)
        msg = ("eval_tta_landuse: %.1f ms/step, TTA acc %.3f, TTA eval %.1f s of %.1f s fit (%.0f%%)"
               % (full * 1e3, tta.scores[-1], tta.seconds, fit_s, 100 * tta.seconds / fit_s))
        wall1 = time.perf_counter() - t0
        msg += ", plain-phase wall %.1f s (TTA share %.0f%%)" % (wall1, 100 * tta.seconds / wall1)
        if args.truth:
            batch = next(iter(make_dataset(x, y)))
            compute, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), x_test, y_test)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit("truth_input_fraction", frac)
            msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (compute * 1e3, frac)
        print(msg + ", wall %.1f s" % (time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
