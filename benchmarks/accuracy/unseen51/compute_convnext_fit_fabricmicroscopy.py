"""Fabric weave classification from microscope tiles: a synthetic set of woven-texture
images (sinusoidal warp/weft patterns with per-class thread density and noise) is built
once as in-memory numpy arrays and passed straight to model.fit of a small ConvNeXt-style
network (7x7 depthwise convs, LayerNorm, inverted-bottleneck GELU MLPs).
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 25
EPOCHS = 2
SIZE = 64
CLASSES = 6


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
        return sum(g) / len(g)


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def make_tiles(rng, n):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    y = rng.integers(0, CLASSES, n)
    x = np.empty((n, SIZE, SIZE, 3), np.float32)
    for i in range(n):
        f = 0.15 + 0.08 * y[i] + rng.normal(0, 0.01)
        ang = rng.uniform(0, np.pi)
        warp = np.sin(f * (xx * np.cos(ang) + yy * np.sin(ang)))
        weft = np.sin(f * 1.3 * (-xx * np.sin(ang) + yy * np.cos(ang)))
        base = warp * weft
        for c in range(3):
            x[i, :, :, c] = base * rng.uniform(0.5, 1.0) + rng.normal(0, 0.3, (SIZE, SIZE))
    return x, y.astype(np.int32)


def block(x, dim):
    r = x
    x = keras.layers.DepthwiseConv2D(7, padding="same")(x)
    x = keras.layers.LayerNormalization(epsilon=1e-6)(x)
    x = keras.layers.Dense(4 * dim, activation="gelu")(x)
    x = keras.layers.Dense(dim)(x)
    return keras.layers.Add()([r, x])


def build_model():
    inp = keras.Input((SIZE, SIZE, 3))
    x = keras.layers.Conv2D(64, 4, strides=4)(inp)
    x = keras.layers.LayerNormalization(epsilon=1e-6)(x)
    for stage, dim in enumerate((64, 128, 192)):
        if stage:
            x = keras.layers.LayerNormalization(epsilon=1e-6)(x)
            x = keras.layers.Conv2D(dim, 2, strides=2)(x)
        for _ in range(2):
            x = block(x, dim)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.LayerNormalization(epsilon=1e-6)(x)
    out = keras.layers.Dense(CLASSES)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.AdamW(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return m


def main():
    rng = np.random.default_rng(51)
    x, y = make_tiles(rng, BATCH * STEPS)
    tf.random.set_seed(51)
    model = build_model()
    timer = StepTimer()
    t0 = time.perf_counter()
    hist = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=True, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    if "--truth" in sys.argv:
        tf.random.set_seed(51)
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat(), steps_per_epoch=STEPS,
                   epochs=EPOCHS, callbacks=[timer2], verbose=0)
        comp = timer2.sec_per_step()
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"truth: full={full*1000:.1f}ms compute={comp*1000:.1f}ms input_fraction={frac:.2f}")
    print(f"convnext fabric model: {STEPS*EPOCHS} steps, {1.0/full:.1f} steps/s, "
          f"final acc {hist.history['accuracy'][-1]:.3f}, fit {time.perf_counter()-t0:.1f}s")


if __name__ == "__main__":
    main()
