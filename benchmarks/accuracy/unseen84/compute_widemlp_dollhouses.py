import time; T0 = time.perf_counter()
import os
import sys
import json
import shutil
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


def mean_after_warmup(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / max(len(tail), 1)


def input_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every train batch end; gaps only within an epoch."""

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
        return mean_after_warmup(self.gaps)


# Doll-house furniture catalogue: each listing has scale (1:12, 1:24, 1:48),
# dimensions in mm, weight, material one-hots, finish codes and a hashed
# maker/description bag; a wide MLP predicts which of 24 room categories the
# piece belongs to.  Everything lives in memory as NumPy arrays fed through
# tf.data.from_tensor_slices + prefetch.
N_ITEMS = 40000
N_FEATS = 384
N_CLASSES = 24
BATCH = 512
STEPS = 65
EPOCHS = 3


def make_catalogue(seed):
    rng = np.random.default_rng(seed)
    scale = rng.choice([12.0, 24.0, 48.0], size=(N_ITEMS, 1))
    dims = rng.lognormal(3.5, 0.6, size=(N_ITEMS, 3)) / scale
    weight = rng.lognormal(2.0, 0.8, size=(N_ITEMS, 1))
    material = np.eye(12)[rng.integers(0, 12, N_ITEMS)]
    bag = (rng.random((N_ITEMS, N_FEATS - 17)) < 0.03).astype(np.float32)
    x = np.concatenate([scale / 48.0, np.log(dims), np.log(weight), material, bag], axis=1).astype(np.float32)
    w = rng.normal(0, 1, (N_FEATS, N_CLASSES)).astype(np.float32)
    y = np.argmax(x @ w + rng.gumbel(size=(N_ITEMS, N_CLASSES)), axis=1).astype(np.int32)
    return x, y


def make_model():
    inp = keras.Input((N_FEATS,))
    x = keras.layers.Dense(1536, activation="relu")(inp)
    x = keras.layers.Dense(1536, activation="relu")(x)
    x = keras.layers.Dense(768, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def run(ds):
    keras.utils.set_random_seed(53)
    model = make_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    x, y = make_catalogue(59)
    ds = (tf.data.Dataset.from_tensor_slices((x, y))
          .shuffle(N_ITEMS, seed=2)
          .batch(BATCH, drop_remainder=True)
          .repeat()
          .prefetch(tf.data.AUTOTUNE))
    full = run(ds)
    emit({"steps_per_second": 1.0 / full})
    print(f"dollhouses: {full * 1000:.1f} ms/step, wall {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        one = next(iter(ds))
        compute = run(tf.data.Dataset.from_tensors(one).repeat())
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"dollhouses truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
