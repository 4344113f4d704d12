"""Agricultural field-boundary segmentation with a small U-Net trained by fit.

Aerial image chips and their boundary masks are generated once and kept in
memory; the tf.data pipeline only slices, batches and prefetches the
tensors, so each step is dominated by the U-Net forward/backward pass.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

SIZE = 128
BATCH = 8
N_CHIPS = 256
STEPS_PER_EPOCH = 40
EPOCHS = 2
BASE = 8


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self):
        gaps = [g for ts in self.epochs for g in np.diff(ts)]
        return float(np.mean(gaps[4:]))  # steps 5 onward


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(kv) + "\n")


def make_chips(rng):
    images = np.empty((N_CHIPS, SIZE, SIZE, 3), np.float32)
    masks = np.zeros((N_CHIPS, SIZE, SIZE, 1), np.float32)
    for i in range(N_CHIPS):
        xs = np.sort(rng.integers(8, SIZE - 8, 3))
        ys = np.sort(rng.integers(8, SIZE - 8, 3))
        img = np.zeros((SIZE, SIZE, 3), np.float32)
        edges = np.concatenate([[0], xs, [SIZE]])
        rows = np.concatenate([[0], ys, [SIZE]])
        for a, b in zip(rows[:-1], rows[1:]):
            for c, d in zip(edges[:-1], edges[1:]):
                img[a:b, c:d] = rng.uniform(0.2, 0.9, 3)
        for x in xs:
            masks[i, :, max(x - 1, 0):x + 1] = 1
        for y in ys:
            masks[i, max(y - 1, 0):y + 1, :] = 1
        images[i] = img + rng.normal(0, 0.05, img.shape)
    return images, masks


def conv_block(x, filters):
    x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    return keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)


def build_unet():
    keras.utils.set_random_seed(13)
    inp = keras.Input((SIZE, SIZE, 3))
    skips, x = [], inp
    for f in (BASE, BASE * 2, BASE * 4):
        x = conv_block(x, f)
        skips.append(x)
        x = keras.layers.MaxPooling2D()(x)
    x = conv_block(x, BASE * 8)
    for f, skip in zip((BASE * 4, BASE * 2, BASE), reversed(skips)):
        x = keras.layers.Conv2DTranspose(f, 2, strides=2, padding="same")(x)
        x = conv_block(keras.layers.Concatenate()([x, skip]), f)
    out = keras.layers.Conv2D(1, 1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy")
    return model


def train(ds):
    model = build_unet()
    clock = StepClock()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[clock], verbose=0)
    return clock.seconds_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    images, masks = make_chips(np.random.default_rng(0))
    ds = (tf.data.Dataset.from_tensor_slices((images, masks))
          .shuffle(N_CHIPS, seed=0).repeat().batch(BATCH, drop_remainder=True).prefetch(tf.data.AUTOTUNE))
    t0 = time.perf_counter()
    full = train(ds)
    report(steps_per_second=1.0 / full)
    msg = f"field boundaries: {full * 1e3:.1f} ms/step, {1.0 / full:.2f} steps/s"
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report(truth_input_fraction=frac)
        msg += f", compute-only {compute * 1e3:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
