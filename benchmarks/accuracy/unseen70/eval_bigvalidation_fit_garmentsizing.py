import time
T0 = time.perf_counter()
import os, sys, json, re, math, tempfile, shutil, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import warnings
warnings.filterwarnings("ignore")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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

# ---- eval_bigvalidation_fit_garmentsizing: a garment size recommender trained on
# body measurements with model.fit, where validation_data is a very large
# held-out fitting-room set evaluated at the end of every epoch.
BATCH = 64
STEPS = 40
EPOCHS = 3
NFEAT = 24
NVAL = 280_000
SIZES = 7


def make_people(n, seed):
    rng = np.random.default_rng(seed)
    height = rng.normal(168, 10, n); chest = rng.normal(96, 12, n); waist = rng.normal(84, 13, n)
    hip = rng.normal(100, 11, n)
    extra = rng.normal(0, 1, (n, NFEAT - 4))
    x = np.column_stack([(height - 168) / 10, (chest - 96) / 12, (waist - 84) / 13, (hip - 100) / 11, extra]).astype(np.float32)
    score = 0.5 * x[:, 1] + 0.3 * x[:, 2] + 0.2 * x[:, 3] + 0.1 * x[:, 0]
    y = np.clip(np.round(score * 1.5 + 3), 0, SIZES - 1).astype(np.int32)
    return x, y


class EvalClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.total = 0.0
        self.t = None

    def on_test_begin(self, logs=None):
        self.t = time.perf_counter()

    def on_test_end(self, logs=None):
        self.total += time.perf_counter() - self.t


def make_model():
    m = keras.Sequential([keras.Input((NFEAT,)),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(SIZES)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


XT, YT = make_people(BATCH * STEPS, 70)
XV, YV = make_people(NVAL, 71)


def run(ds):
    keras.utils.set_random_seed(70)
    model = make_model()
    timer, clock = StepTimer(), EvalClock()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, clock],
              validation_data=(XV, YV), validation_batch_size=256, verbose=0)
    return sec_per_step(timer.gaps), clock.total


def main():
    full, ev = run(tf.data.Dataset.from_tensor_slices((XT, YT)).repeat().batch(BATCH))
    sps = 1.0 / full
    emit({"steps_per_second": sps})
    wall = time.perf_counter() - T0
    print(f"[eval_bigvalidation_fit_garmentsizing] full {full*1000:.1f} ms/step, {sps:.2f} steps/s, eval {ev:.1f}s = {100*ev/wall:.0f}% of wall {wall:.1f}s")
    if TRUTH:
        batch = (XT[:BATCH], YT[:BATCH])
        comp, ev2 = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        wall = time.perf_counter() - T0
        print(f"[eval_bigvalidation_fit_garmentsizing] truth: compute {comp*1000:.1f} ms/step, input fraction {frac:.3f}, eval total {ev+ev2:.1f}s = {100*(ev+ev2)/wall:.0f}% of wall {wall:.1f}s")


if __name__ == "__main__":
    main()
