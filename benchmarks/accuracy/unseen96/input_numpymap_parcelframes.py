"""Conveyor parcel photos -> parcel-size class.

Input path: tf.data over frame ids, .map(tf.numpy_function(render_and_augment)) with no
parallel calls; each call synthesises a conveyor camera frame of a parcel with numpy,
blurs, crops and normalises it; batched and fed to model.fit.
Known bottleneck: serial numpy_function per frame (input-bound).
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 32
STEPS = 60
EPOCHS = 3
RAW = 96       # raw camera frame side
SIDE = 64      # cropped network input side
N_SIZES = 6    # letter, large letter, small parcel, medium, large, oversize
BLUR_TAPS = 5
BLUR_PASSES = 2


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
        return float(np.mean(g))


YY, XX = np.mgrid[0:RAW, 0:RAW].astype(np.float32)


def render_and_augment(frame_id):
    rng = np.random.default_rng(int(frame_id))
    size_class = int(rng.integers(0, N_SIZES))
    w = 10 + size_class * 10 + rng.integers(-3, 4)
    h = 8 + size_class * 8 + rng.integers(-3, 4)
    cx, cy = rng.integers(30, RAW - 30, 2)
    ang = rng.uniform(-0.5, 0.5)
    c, s = np.cos(ang), np.sin(ang)
    u = (XX - cx) * c + (YY - cy) * s
    v = -(XX - cx) * s + (YY - cy) * c
    box = ((np.abs(u) < w / 2) & (np.abs(v) < h / 2)).astype(np.float32)
    belt = 0.3 + 0.05 * np.sin(XX / 3.0 + rng.uniform(0, 6))      # conveyor belt ribs
    img = np.stack([belt + box * rng.uniform(0.4, 0.7), belt + box * rng.uniform(0.3, 0.6),
                    belt + box * rng.uniform(0.1, 0.4)], axis=-1)
    tape = (np.abs(v) < 2) & (box > 0)
    img[tape] = [0.8, 0.7, 0.2]
    img += rng.normal(0, 0.05, img.shape).astype(np.float32)
    # separable motion blur along the belt direction, per channel
    k = np.ones(BLUR_TAPS, np.float32) / BLUR_TAPS
    for _ in range(BLUR_PASSES):
        for ch in range(3):
            for r in range(RAW):
                img[r, :, ch] = np.convolve(img[r, :, ch], k, mode="same")
    y0, x0 = rng.integers(0, RAW - SIDE, 2)
    crop = img[y0:y0 + SIDE, x0:x0 + SIDE]
    crop = (crop - crop.mean()) / (crop.std() + 1e-6)
    return crop.astype(np.float32), np.int32(size_class)


def tf_load(frame_id):
    x, y = tf.numpy_function(render_and_augment, [frame_id], [tf.float32, tf.int32])
    x.set_shape((SIDE, SIDE, 3))
    y.set_shape(())
    return x, y


def make_dataset():
    ds = tf.data.Dataset.range(1_000_000).map(tf_load)   # no num_parallel_calls: serial
    return ds.batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(96)
    inp = keras.Input((SIDE, SIDE, 3))
    h = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    out = keras.layers.Dense(N_SIZES)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


full = run(make_dataset())
emit({"steps_per_second": 1.0 / full})
print(f"parcelframes: {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    batch = next(iter(make_dataset()))
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"parcelframes truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
