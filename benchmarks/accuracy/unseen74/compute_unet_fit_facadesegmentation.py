"""Facade-element segmentation (window / wall / balcony masks) with a small U-Net trained by
model.fit on in-memory tensors through a cached tf.data pipeline: the step is compute-bound."""
import time
WALL0 = time.perf_counter()
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    use = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(use))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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

SIZE = 32
BATCH = 16
STEPS = 20
EPOCHS = 3
N_IMG = 256


def make_facades(n, seed=51):
    rng = np.random.default_rng(seed)
    x = np.zeros((n, SIZE, SIZE, 3), np.float32)
    y = np.zeros((n, SIZE, SIZE), np.int32)
    for k in range(n):
        base = rng.uniform(0.3, 0.7, 3)
        x[k] = base + rng.normal(0, 0.03, (SIZE, SIZE, 3))
        floors, bays = int(rng.integers(3, 7)), int(rng.integers(3, 7))
        fh, bw = SIZE // floors, SIZE // bays
        for f in range(floors):
            for b in range(bays):
                y0, x0 = f * fh + fh // 4, b * bw + bw // 4
                y[k, y0:y0 + fh // 2, x0:x0 + bw // 2] = 1
                x[k, y0:y0 + fh // 2, x0:x0 + bw // 2] = (0.1, 0.15, 0.25)
            if f % 2 == 1:
                y[k, f * fh + fh - 2:f * fh + fh, :] = 2
                x[k, f * fh + fh - 2:f * fh + fh, :] = 0.9
    return x, y


def block(x, f):
    x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
    return keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)


def build_model():
    inp = keras.Input((SIZE, SIZE, 3))
    c1 = block(inp, 12)
    c2 = block(keras.layers.MaxPooling2D()(c1), 24)
    c3 = block(keras.layers.MaxPooling2D()(c2), 48)
    u2 = block(keras.layers.Concatenate()([keras.layers.UpSampling2D()(c3), c2]), 24)
    u1 = block(keras.layers.Concatenate()([keras.layers.UpSampling2D()(u2), c1]), 12)
    m = keras.Model(inp, keras.layers.Conv2D(3, 1)(u1))
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u74_compute_unet_fit_facadesegmentation_")
    try:
        x, y = make_facades(N_IMG)
        ds = (tf.data.Dataset.from_tensor_slices((x, y)).cache()
              .shuffle(N_IMG, seed=3).repeat().batch(BATCH).prefetch(2))
        tf.random.set_seed(0)
        timer = StepTimer()
        model = build_model()
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = sec_per_step(timer.gaps)
        emit({"steps_per_second": 1.0 / full})
        print(f"[compute_unet_fit_facadesegmentation] full {full*1000:.1f} ms/step "
              f"({1.0/full:.2f} steps/s) over {len(timer.gaps)} gaps, wall {time.perf_counter()-WALL0:.1f}s")
        if TRUTH:
            xb, yb = next(iter(ds))
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            tf.random.set_seed(0)
            t2 = StepTimer()
            m2 = build_model()
            m2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = sec_per_step(t2.gaps)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"[compute_unet_fit_facadesegmentation] truth compute {comp*1000:.1f} ms/step, "
                  f"input fraction {frac:.3f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
