import time; T0 = time.perf_counter()
# Stain photo classifier for the spotting bench (wine, grease, ink, grass,
# blood, rust). Each photo is rendered and augmented in NumPy inside a
# tf.data map through tf.numpy_function (serial map, no parallel calls).
import os
import sys
import json

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
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

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


BATCH = 32
STEPS = 90
EPOCHS = 3
SIZE = 64
STAIN_RGB = np.array([[0.45, 0.05, 0.15], [0.75, 0.65, 0.35], [0.10, 0.12, 0.45],
                      [0.25, 0.50, 0.15], [0.55, 0.08, 0.05], [0.60, 0.30, 0.10]], np.float32)
FABRIC_RGB = np.array([[0.92, 0.92, 0.90], [0.20, 0.25, 0.45], [0.85, 0.80, 0.70],
                       [0.15, 0.15, 0.15], [0.70, 0.20, 0.25]], np.float32)


def render_stain(seed):
    rng = np.random.default_rng(int(seed))
    label = int(rng.integers(0, len(STAIN_RGB)))
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    # woven fabric texture
    weave = 0.04 * np.sin(xx * rng.uniform(1.5, 2.5)) * np.sin(yy * rng.uniform(1.5, 2.5))
    img = FABRIC_RGB[rng.integers(0, len(FABRIC_RGB))][None, None, :] + weave[..., None]
    img = img + 0.03 * rng.standard_normal((SIZE, SIZE, 3)).astype(np.float32)
    # irregular stain made of overlapping blobs
    mask = np.zeros((SIZE, SIZE), np.float32)
    cx, cy = rng.uniform(18, 46, size=2)
    for _ in range(int(rng.integers(10, 20))):
        bx, by = cx + rng.normal(0, 8), cy + rng.normal(0, 8)
        r = rng.uniform(4, 14)
        mask += np.exp(-(((xx - bx) ** 2 + (yy - by) ** 2) / (2 * r * r)))
    mask = np.clip(mask, 0, 1)
    # wicking halo: repeated box blur
    halo = mask.copy()
    for _ in range(16):
        halo = (halo + np.roll(halo, 1, 0) + np.roll(halo, -1, 0)
                + np.roll(halo, 1, 1) + np.roll(halo, -1, 1)) / 5.0
    alpha = np.clip(0.8 * mask + 0.3 * halo, 0, 1)[..., None]
    img = img * (1 - alpha) + STAIN_RGB[label][None, None, :] * alpha
    # augmentation: flips, rotation by 90s, brightness, white balance, jpeg-ish blockiness
    if rng.random() < 0.5:
        img = img[:, ::-1]
    img = np.rot90(img, int(rng.integers(0, 4)))
    img = img * rng.uniform(0.8, 1.2) * rng.uniform(0.9, 1.1, size=3)[None, None, :]
    blocks = img.reshape(SIZE // 8, 8, SIZE // 8, 8, 3).mean(axis=(1, 3))
    img = 0.85 * img + 0.15 * np.repeat(np.repeat(blocks, 8, 0), 8, 1)
    img = np.clip(img, 0, 1).astype(np.float32)
    return img, np.int32(label)


def tf_render(seed):
    img, lab = tf.numpy_function(render_stain, [seed], [tf.float32, tf.int32])
    img.set_shape((SIZE, SIZE, 3))
    lab.set_shape(())
    return img, lab


def make_model():
    inp = keras.Input(shape=(SIZE, SIZE, 3))
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(len(STAIN_RGB), activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(ds):
    keras.utils.set_random_seed(21)
    model = make_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0, shuffle=False)
    return timer.seconds_per_step()


seeds = tf.data.Dataset.range(10_000_000)
ds = seeds.map(tf_render).batch(BATCH)
full = train(ds)
emit({"steps_per_second": 1.0 / full})
print(f"[stainphotos] normal: {full*1000:.1f} ms/step, {1/full:.2f} steps/s, wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    one = next(iter(seeds.map(tf_render).batch(BATCH)))
    compute = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[stainphotos] truth: compute {compute*1000:.1f} ms/step, full {full*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
