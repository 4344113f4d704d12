"""Fisheries age reading: estimate fish age from otolith section images.

Input path: tf.data map with tf.numpy_function that decodes each stored PGM (P5) otolith
image (header parse + np.frombuffer), applies a random rotation by inverse coordinate
mapping, contrast jitter and a radial ring-enhancement filter in numpy.
"""
import json, os, sys, time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 32, 80, 3
SIZE, N_IMG = 48, 400


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
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


def make_pgms(rng):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] - SIZE / 2
    blobs, ages = [], []
    for _ in range(N_IMG):
        age = int(rng.integers(1, 13))
        ecc = rng.uniform(1.2, 1.6)
        r = np.sqrt((xx / ecc) ** 2 + yy ** 2) / (SIZE / 2)
        img = 0.5 + 0.35 * np.cos(2 * np.pi * age * r ** 0.8) * (r < 0.95) + rng.normal(0, 0.08, r.shape)
        pix = np.clip(img * 255, 0, 255).astype(np.uint8)
        blobs.append(b"P5\n# otolith section\n%d %d\n255\n" % (SIZE, SIZE) + pix.tobytes())
        ages.append(age)
    return blobs, np.asarray(ages, np.float32)


def decode_augment(blob, seed):
    rng = np.random.default_rng(int(seed))
    raw = bytes(blob)
    fields, pos = [], 0
    while len(fields) < 4:
        nl = raw.index(b"\n", pos)
        line = raw[pos:nl]
        pos = nl + 1
        if not line.startswith(b"#"):
            fields.extend(line.split())
    w, h = int(fields[1]), int(fields[2])
    img = np.frombuffer(raw, np.uint8, w * h, pos).reshape(h, w).astype(np.float32) / 255.0
    ang = rng.uniform(0, 2 * np.pi)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    cy, cx = h / 2, w / 2
    sy = np.cos(ang) * (yy - cy) - np.sin(ang) * (xx - cx) + cy
    sx = np.sin(ang) * (yy - cy) + np.cos(ang) * (xx - cx) + cx
    sy, sx = np.clip(sy, 0, h - 1).astype(np.int32), np.clip(sx, 0, w - 1).astype(np.int32)
    img = img[sy, sx]
    img = (img - img.mean()) * rng.uniform(0.8, 1.25) + 0.5
    pad = np.pad(img, 1, mode="edge")
    lap = 4 * img - pad[:-2, 1:-1] - pad[2:, 1:-1] - pad[1:-1, :-2] - pad[1:-1, 2:]
    r = np.sqrt((yy - cy) ** 2 + (xx - cx) ** 2).astype(np.int32)
    radial = np.bincount(r.ravel(), img.ravel(), minlength=SIZE) / np.maximum(np.bincount(r.ravel(), minlength=SIZE), 1)
    ring = radial[np.minimum(r, SIZE - 1)]
    return np.stack([img, lap, ring], -1).astype(np.float32)


def make_ds(blobs, ages, seed):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, N_IMG, BATCH * STEPS * EPOCHS + BATCH)
    ds = tf.data.Dataset.from_tensor_slices((tf.constant([blobs[i] for i in idx]), ages[idx], np.arange(len(idx)) + seed * 10 ** 6))

    def fn(b, a, s):
        img = tf.numpy_function(decode_augment, [b, s], tf.float32)
        return tf.ensure_shape(img, (SIZE, SIZE, 3)), a

    return ds.map(fn).batch(BATCH)


def make_model():
    return keras.Sequential([
        keras.Input((SIZE, SIZE, 3)),
        keras.layers.AveragePooling2D(2),
        keras.layers.Conv2D(12, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(24, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])


def train(ds):
    keras.utils.set_random_seed(7)
    model = make_model()
    model.compile(keras.optimizers.Adam(1e-3), "mse")
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    blobs, ages = make_pgms(np.random.default_rng(72))
    full = train(make_ds(blobs, ages, 1))
    emit({"steps_per_second": 1.0 / full})
    wall_normal = time.perf_counter() - T0
    line = f"otolithpgm: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
    if TRUTH:
        x, y = next(iter(make_ds(blobs, ages, 2)))
        comp = train(tf.data.Dataset.from_tensors((x, y)).repeat())
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        line += f", compute-only {comp * 1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", normal-run wall {wall_normal:.1f}s, wall {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
