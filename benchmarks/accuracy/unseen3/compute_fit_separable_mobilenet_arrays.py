# Recognises hand-drawn traffic-sign pictograms (48x48 RGB) with a small MobileNetV2-style
# network (inverted residual blocks: 1x1 expand, depthwise 3x3, 1x1 project), trained with
# model.fit on NumPy arrays that are already in memory.
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, TRUTH, report, timed_fit

SIDE, CLASSES, BATCH, N = 48, 12, 32, 6400
rng = np.random.default_rng(0)
yy, xx = np.mgrid[0:SIDE, 0:SIDE] / SIDE
labels = rng.integers(0, CLASSES, N)
images = np.empty((N, SIDE, SIDE, 3), np.float32)
for k in range(CLASSES):
    chosen = labels == k
    angle = np.pi * k / CLASSES
    stripe = np.sin(12 * (xx * np.cos(angle) + yy * np.sin(angle)))
    ring = np.exp(-((np.hypot(xx - 0.5, yy - 0.5) - 0.1 - 0.03 * k) ** 2) / 0.002)
    base = np.stack([stripe, ring, stripe * ring], axis=-1)
    images[chosen] = base + 0.6 * rng.standard_normal((chosen.sum(), SIDE, SIDE, 3))


def inverted_residual(x, expand, out, stride):
    h = keras.layers.Conv2D(x.shape[-1] * expand, 1, use_bias=False)(x)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.ReLU(6.0)(h)
    h = keras.layers.DepthwiseConv2D(3, strides=stride, padding="same", use_bias=False)(h)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.ReLU(6.0)(h)
    h = keras.layers.Conv2D(out, 1, use_bias=False)(h)
    h = keras.layers.BatchNormalization()(h)
    if stride == 1 and x.shape[-1] == out:
        h = keras.layers.Add()([x, h])
    return h


inputs = keras.Input((SIDE, SIDE, 3))
h = keras.layers.Conv2D(24, 3, strides=2, padding="same", activation="relu")(inputs)
for expand, out, stride in [(4, 24, 1), (6, 32, 2), (6, 32, 1), (6, 64, 2), (6, 64, 1), (6, 96, 1)]:
    h = inverted_residual(h, expand, out, stride)
h = keras.layers.Conv2D(256, 1, activation="relu")(h)
h = keras.layers.GlobalAveragePooling2D()(h)
model = keras.Model(inputs, keras.layers.Dense(CLASSES)(h))
model.compile(
    keras.optimizers.Adam(2e-3),
    keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
model.fit(images[: 3 * BATCH], labels[: 3 * BATCH], batch_size=BATCH, verbose=0)
timed_fit(model, images, N // BATCH, y=labels, batch_size=BATCH, shuffle=True)

if TRUTH:
    # steady-state step on the arrays against the step on one batch held as a tensor
    class StepTimer(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.count = 0

        def on_train_batch_begin(self, batch, logs=None):
            self.count += 1
            if self.count == SKIP_STEPS + 1:
                self.start = time.perf_counter()

        def on_train_end(self, logs=None):
            self.per_step = (time.perf_counter() - self.start) / (self.count - SKIP_STEPS)

    STEPS = SKIP_STEPS + 20
    one_batch = tf.data.Dataset.from_tensors((images[:BATCH], labels[:BATCH])).repeat()
    full, compute = [], []
    for _ in range(3):
        timer = StepTimer()
        model.fit(
            images[: STEPS * BATCH],
            labels[: STEPS * BATCH],
            batch_size=BATCH,
            verbose=0,
            callbacks=[timer],
        )
        full.append(timer.per_step)
        model.fit(one_batch, steps_per_epoch=STEPS, verbose=0, callbacks=[timer])
        compute.append(timer.per_step)
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
