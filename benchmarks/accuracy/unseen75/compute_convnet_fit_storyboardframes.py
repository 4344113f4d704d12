"""Storyboard department: classify the shot size (extreme wide ... extreme
close-up) of 64x64 storyboard thumbnails. The frames are synthesised once into
memory, sliced by tf.data from tensors, cached and prefetched, and a
convolutional network is trained with model.fit.
Intended bottleneck: COMPUTE (convolutions dominate; input is in memory)."""
import time
T0 = time.perf_counter()
import os, sys, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now


def report(name, full, compute=None, extra=""):
    emit({"steps_per_second": 1.0 / full})
    line = f"[{name}] sec/step={full*1000:.1f}ms steps/s={1.0/full:.2f}"
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        line += f" compute={compute*1000:.1f}ms truth_input_fraction={frac:.3f}"
    line += f" wall={time.perf_counter()-T0:.1f}s {extra}"
    print(line, flush=True)
SEED, BATCH, STEPS, EPOCHS = 75, 32, 35, 3
H = W = 64
NCLS = 6


def make_frames(n, rng):
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    labels = rng.integers(0, NCLS, n).astype(np.int32)
    x = rng.normal(0.5, 0.08, (n, H, W, 3)).astype(np.float32)
    for i, lab in enumerate(labels):
        r = 4 + 5 * lab  # bigger subject for tighter shots
        cy, cx = rng.integers(20, 44, 2)
        mask = ((yy - cy) ** 2 + (xx - cx) ** 2) < r * r
        x[i, mask, :] *= 0.3
    return x, labels


def make_model():
    keras.utils.set_random_seed(SEED)
    L = keras.layers
    inp = keras.Input((H, W, 3))
    h = inp
    for f in (16, 32, 48):
        h = L.Conv2D(f, 3, padding="same", activation="relu")(h)
        h = L.MaxPooling2D()(h)
    h = L.GlobalAveragePooling2D()(h)
    out = L.Dense(NCLS)(L.Dense(128, activation="relu")(h))
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    model, timer = make_model(), StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    x, y = make_frames(1600, np.random.default_rng(SEED))
    ds = (tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=True)
          .cache().repeat().prefetch(tf.data.AUTOTUNE))
    full = run(ds)
    compute = None
    if TRUTH:
        one = next(iter(ds))
        compute = run(tf.data.Dataset.from_tensors(one).repeat())
    report("compute_convnet_fit_storyboardframes", full, compute)


if __name__ == "__main__":
    main()
