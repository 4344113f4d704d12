# Doodle classifier (circle, square, triangle, star, spiral, zigzag) trained with a hand-written
# loop. Each doodle is drawn as jittered pen strokes, rasterised point by point into a 40x40
# canvas, blurred and centred with NumPy inside a plain Python batch generator.
import itertools
import math
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, TRUTH, report

SIZE, CLASSES, BATCH = 40, 6, 64


def shape_points(kind, rng):
    t = np.linspace(0, 1, 48)
    if kind == 0:
        pts = np.stack([np.cos(2 * np.pi * t), np.sin(2 * np.pi * t)], 1)
    elif kind == 1:
        corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1], [-1, -1]], np.float64)
        pts = np.concatenate([np.linspace(a, b, 12) for a, b in itertools.pairwise(corners)])
    elif kind == 2:
        corners = np.array([[0, -1], [0.9, 0.8], [-0.9, 0.8], [0, -1]], np.float64)
        pts = np.concatenate([np.linspace(a, b, 16) for a, b in itertools.pairwise(corners)])
    elif kind == 3:
        angles = np.pi / 2 + np.arange(11) * 4 * np.pi / 5
        pts = np.stack([np.cos(angles), np.sin(angles)], 1)
    elif kind == 4:
        pts = np.stack([t * np.cos(6 * np.pi * t), t * np.sin(6 * np.pi * t)], 1)
    else:
        pts = np.stack([2 * t - 1, np.where(np.arange(48) % 8 < 4, -0.6, 0.6)], 1)
    angle = rng.uniform(-0.4, 0.4)
    rotation = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    pts = pts @ rotation * rng.uniform(0.6, 1.0, 2) + rng.normal(0, 0.04, pts.shape)
    return pts + rng.uniform(-0.15, 0.15, 2)


def rasterise(points, rng):
    canvas = np.zeros((SIZE, SIZE), np.float32)
    pix = (points + 1.3) / 2.6 * (SIZE - 1)
    for (x0, y0), (x1, y1) in itertools.pairwise(pix):
        steps = int(max(abs(x1 - x0), abs(y1 - y0)) * 2) + 1
        for i in range(steps + 1):
            x = x0 + (x1 - x0) * i / steps
            y = y0 + (y1 - y0) * i / steps
            xi, yi = int(round(x)), int(round(y))
            for dx, dy in ((0, 0), (1, 0), (0, 1)):
                if 0 <= xi + dx < SIZE and 0 <= yi + dy < SIZE:
                    canvas[yi + dy, xi + dx] = min(1.0, canvas[yi + dy, xi + dx] + 0.6)
    blurred = canvas.copy()
    blurred[1:] += 0.5 * canvas[:-1]
    blurred[:-1] += 0.5 * canvas[1:]
    blurred[:, 1:] += 0.5 * canvas[:, :-1]
    blurred[:, :-1] += 0.5 * canvas[:, 1:]
    ys, xs = np.nonzero(blurred > 0.1)
    shift_y, shift_x = SIZE // 2 - int(ys.mean()), SIZE // 2 - int(xs.mean())
    blurred = np.roll(blurred, (shift_y, shift_x), axis=(0, 1))
    if rng.random() < 0.5:
        blurred = blurred[:, ::-1]
    return blurred / blurred.max()


def make_batches(seed=0):
    rng = np.random.default_rng(seed)
    while True:
        kinds = rng.integers(0, CLASSES, BATCH)
        images = np.stack([rasterise(shape_points(k, rng), rng) for k in kinds])
        yield images[..., None].astype(np.float32), kinds.astype(np.int32)


model = keras.Sequential(
    [
        keras.Input((SIZE, SIZE, 1)),
        keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(96, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(192, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(CLASSES),
    ]
)
optimizer = keras.optimizers.RMSprop(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
accuracy = keras.metrics.SparseCategoricalAccuracy()


@tf.function
def train_step(images, kinds):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_fn(kinds, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    accuracy.update_state(kinds, logits)
    return loss


def train(batches, steps, skip=0):
    """Seconds per step over ``steps`` steps, timed from step ``skip`` on."""
    for step, (x, y) in enumerate(batches):
        if step == skip:
            start = time.perf_counter()
        if step == steps:
            break
        loss = train_step(x, y)
    float(loss)
    return (time.perf_counter() - start) / (steps - skip)


train(make_batches(), 3)
report(steps_per_second=1 / train(make_batches(1), 220))
print("train accuracy", round(float(accuracy.result()), 3))
if TRUTH:
    same_batch = next(make_batches(2))
    full, compute = [], []
    for _ in range(3):
        full.append(train(make_batches(3), 25, SKIP_STEPS))
        compute.append(train(itertools.repeat(same_batch), 25, SKIP_STEPS))
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
