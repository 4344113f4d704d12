"""Confocal microscopy phenotyping: each field of view is a 16-bit multi-page TIFF
z-stack written by the microscope software. A tf.data pipeline lists the stacks,
and a serial map calls tf.py_function to open each TIFF with PIL, seek through the
z-slices, and build max/mean/std projections with percentile normalisation for model.fit.
"""
import os, sys, json, time, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
from PIL import Image
import tensorflow as tf
import keras

SEED = 40
SIZE = 96
Z = 12
N_STACKS = 200
N_CLASSES = 3
BATCH = 16
STEPS = 40
EPOCHS = 3


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def append_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def write_stacks(root):
    """Phenotype 0: round nuclei, 1: elongated, 2: fragmented (many small puncta)."""
    rng = np.random.default_rng(SEED)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    paths, labels = [], []
    for i in range(N_STACKS):
        label = int(rng.integers(0, N_CLASSES))
        vol = rng.normal(800, 120, (Z, SIZE, SIZE)).astype(np.float32)
        n_obj = 6 if label < 2 else 25
        for _ in range(n_obj):
            cy, cx = rng.uniform(8, SIZE - 8, 2)
            cz = rng.uniform(3, Z - 3)
            sy, sx = (5, 5) if label == 0 else ((3, 9) if label == 1 else (1.5, 1.5))
            blob = np.exp(-((yy - cy) ** 2 / (2 * sy ** 2) + (xx - cx) ** 2 / (2 * sx ** 2)))
            for z in range(Z):
                vol[z] += 9000 * np.exp(-((z - cz) ** 2) / 6.0) * blob
        vol = np.clip(vol, 0, 65535).astype(np.uint16)
        pages = [Image.fromarray(s) for s in vol]
        p = os.path.join(root, f"fov_{i:04d}.tif")
        pages[0].save(p, save_all=True, append_images=pages[1:])
        paths.append(p)
        labels.append(label)
    return paths, labels


def load_projection(path):
    path = path.numpy().decode()
    slices = []
    with Image.open(path) as im:
        for z in range(im.n_frames):
            im.seek(z)
            slices.append(np.array(im, dtype=np.float32))
    vol = np.stack(slices)
    lo, hi = np.percentile(vol, [1, 99.8])
    vol = np.clip((vol - lo) / (hi - lo + 1e-6), 0, 1)
    proj = np.stack([vol.max(0), vol.mean(0), vol.std(0)], axis=-1)
    return proj.astype(np.float32)


def make_dataset(paths, labels, seed):
    ds = tf.data.Dataset.from_tensor_slices((paths, labels)).shuffle(len(paths), seed=seed).repeat()

    def parse(p, y):
        x = tf.py_function(load_projection, [p], tf.float32)
        x.set_shape((SIZE, SIZE, 3))
        x = tf.image.random_flip_left_right(x)
        x = tf.image.random_flip_up_down(x)
        return x, y

    return ds.map(parse).batch(BATCH).prefetch(1)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SIZE, SIZE, 3))
    x = inp
    for f in (32, 64, 128):
        x = keras.layers.Conv2D(f, 3, strides=2, padding="same", activation="relu")(x)
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(ds, timer):
    model = build_model()
    return model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0).history


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u40_input_tiffstack_pyfunction_confocal_")
    try:
        paths, labels = write_stacks(tmp)
        timer = StepTimer()
        hist = train(make_dataset(paths, labels, SEED), timer)
        full = timer.seconds_per_step()
        append_out({"steps_per_second": 1.0 / full})
        msg = f"confocal tiff stacks: {full*1000:.1f} ms/step, acc {hist['accuracy'][-1]:.3f}"
        if truth:
            batch = next(iter(make_dataset(paths, labels, SEED + 1)))
            ctimer = StepTimer()
            train(tf.data.Dataset.from_tensors(batch).repeat(), ctimer)
            comp = ctimer.seconds_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append_out({"truth_input_fraction": frac})
            msg += f", compute-only {comp*1000:.1f} ms/step, truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
