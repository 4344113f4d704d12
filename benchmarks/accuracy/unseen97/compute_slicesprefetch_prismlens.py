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


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at the end of every training batch; gaps only within an epoch."""

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

# Lens prism inspection photos: grey-scale close-ups of Fresnel lens prisms taken
# during the annual inspection, labelled ok / chipped edge / hairline crack /
# discoloured cement.  The whole set is generated up front and held in memory;
# tf.data.from_tensor_slices + batch + prefetch feeds a small CNN via model.fit.

BATCH = 64
STEPS_PER_EPOCH = 40
EPOCHS = 3
N_IMG = 2048
SIDE = 48
N_CLASS = 4


def make_photos():
    rng = np.random.default_rng(97)
    yy, xx = np.mgrid[0:SIDE, 0:SIDE] / SIDE
    imgs = np.empty((N_IMG, SIDE, SIDE, 1), np.float32)
    labels = rng.integers(0, N_CLASS, N_IMG).astype(np.int32)
    for i in range(N_IMG):
        ridge = 0.5 + 0.4 * np.sin(2 * np.pi * (xx * rng.uniform(3, 6) + yy * rng.uniform(0.5, 1.5)))
        c = labels[i]
        if c == 1:
            ridge[:, : int(rng.integers(4, 12))] *= 0.2
        elif c == 2:
            k = rng.uniform(-1, 1)
            ridge[np.abs(yy - (0.5 + k * (xx - 0.5))) < 0.01] = 1.0
        elif c == 3:
            ridge *= 0.6 + 0.4 * np.exp(-((xx - 0.5) ** 2 + (yy - 0.5) ** 2) * 8)
        imgs[i, :, :, 0] = ridge + rng.normal(0, 0.05, (SIDE, SIDE))
    return imgs, labels


def build_model():
    keras.utils.set_random_seed(7)
    m = keras.Sequential([
        keras.Input((SIDE, SIDE, 1)),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(96, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(N_CLASS),
    ])
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


imgs, labels = make_photos()
ds = tf.data.Dataset.from_tensor_slices((imgs, labels)).batch(BATCH, drop_remainder=True).cache().repeat().prefetch(tf.data.AUTOTUNE)
full = train(ds)
emit({"steps_per_second": 1.0 / full})
print(f"[prismlens] normal run: {full*1000:.2f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    one = (tf.constant(imgs[:BATCH]), tf.constant(labels[:BATCH]))
    compute = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[prismlens] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
