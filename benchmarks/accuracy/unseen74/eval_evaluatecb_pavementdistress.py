"""Pavement-distress classifier (intact / longitudinal crack / alligator / pothole patches):
an EvaluateHoldout callback runs model.evaluate over a large survey holdout at every epoch end."""
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
BATCH = 32
STEPS = 20
EPOCHS = 3
N_TRAIN = 640
N_VAL = 17500


def make_patches(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n).astype(np.int32)
    x = 0.5 + 0.08 * rng.standard_normal((n, SIZE, SIZE, 1)).astype(np.float32)
    col = rng.integers(4, SIZE - 4, n)
    rows = np.arange(SIZE)
    for k in np.where(y == 1)[0]:
        x[k, :, col[k] - 1:col[k] + 1, 0] -= 0.35
    for k in np.where(y == 2)[0]:
        x[k, rows % 6 == 0, :, 0] -= 0.2
        x[k, :, rows % 7 == 0, 0] -= 0.2
    for k in np.where(y == 3)[0]:
        c = col[k]
        x[k, c - 4:c + 4, c - 4:c + 4, 0] -= 0.4
    return x, y


class EvaluateHoldout(keras.callbacks.Callback):
    def __init__(self, val_ds):
        super().__init__()
        self.val_ds = val_ds
        self.seconds = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        res = self.model.evaluate(self.val_ds, verbose=0, return_dict=True)
        self.seconds += time.perf_counter() - t
        print(f"  epoch {epoch}: holdout loss {res['loss']:.4f} acc {res['acc']:.3f}")


def build_model():
    m = keras.Sequential([keras.Input((SIZE, SIZE, 1)),
                          keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
                          keras.layers.MaxPooling2D(),
                          keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                          keras.layers.MaxPooling2D(),
                          keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                          keras.layers.GlobalAveragePooling2D(),
                          keras.layers.Dense(4)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=[keras.metrics.SparseCategoricalAccuracy(name="acc")])
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u74_eval_evaluatecb_pavementdistress_")
    try:
        xt, yt = make_patches(N_TRAIN, 71)
        xv, yv = make_patches(N_VAL, 72)
        train_ds = (tf.data.Dataset.from_tensor_slices((xt, yt)).cache()
                    .shuffle(N_TRAIN, seed=4).repeat().batch(BATCH).prefetch(2))
        val_ds = tf.data.Dataset.from_tensor_slices((xv, yv)).batch(256).prefetch(2)
        tf.random.set_seed(0)
        timer, ev = StepTimer(), EvaluateHoldout(val_ds)
        model = build_model()
        model.fit(train_ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, ev], verbose=0)
        full = sec_per_step(timer.gaps)
        emit({"steps_per_second": 1.0 / full})
        wall = time.perf_counter() - WALL0
        print(f"[eval_evaluatecb_pavementdistress] full {full*1000:.1f} ms/step ({1.0/full:.2f} steps/s), "
              f"evaluation {ev.seconds:.1f}s = {100*ev.seconds/wall:.1f}% of wall {wall:.1f}s")
        if TRUTH:
            xb, yb = next(iter(train_ds))
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            tf.random.set_seed(0)
            t2, ev2 = StepTimer(), EvaluateHoldout(val_ds)
            m2 = build_model()
            m2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2, ev2], verbose=0)
            comp = sec_per_step(t2.gaps)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            wall = time.perf_counter() - WALL0
            print(f"[eval_evaluatecb_pavementdistress] truth compute {comp*1000:.1f} ms/step, input fraction "
                  f"{frac:.3f}; evaluation total {ev.seconds+ev2.seconds:.1f}s = "
                  f"{100*(ev.seconds+ev2.seconds)/wall:.1f}% of wall {wall:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
