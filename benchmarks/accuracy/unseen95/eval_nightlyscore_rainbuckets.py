"""Estate rainfall gauges -> next-week green-leaf yield per section.

A small regressor is trained on gauge features; after every epoch a
callback scores the whole multi-season held-out archive (hundreds of
thousands of gauge-weeks) with model.predict and computes MAE per section.
"""
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

BATCH = 256
STEPS = 40
EPOCHS = 4
FEATS = 48
HELD_OUT = 600_000
SECTIONS = 64


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
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
        g = self.gaps[5:]
        return sum(g) / len(g)


class ArchiveScorer(keras.callbacks.Callback):
    def __init__(self, x, y, section):
        super().__init__()
        self.x, self.y, self.section = x, y, section
        self.seconds = 0.0
        self.history = []
        self.epoch_train = []
        self.t_begin = None

    def on_train_begin(self, logs=None):
        self.t_mark = time.perf_counter()
        self.outside = []

    def on_train_end(self, logs=None):
        self.outside.append(time.perf_counter() - self.t_mark)

    def on_epoch_begin(self, epoch, logs=None):
        self.t_begin = time.perf_counter()
        self.outside.append(self.t_begin - self.t_mark)

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        self.epoch_train.append(t - self.t_begin)
        pred = self.model.predict(self.x, batch_size=2048, verbose=0)[:, 0]
        err = np.abs(pred - self.y)
        per_section = np.bincount(self.section, weights=err, minlength=SECTIONS) / np.maximum(
            np.bincount(self.section, minlength=SECTIONS), 1)
        self.history.append((float(err.mean()), float(per_section.max())))
        self.t_mark = time.perf_counter()
        self.seconds += self.t_mark - t


def gauge_weeks(rng, n):
    rain = rng.gamma(1.5, 12.0, (n, FEATS)).astype(np.float32)
    section = rng.integers(0, SECTIONS, n)
    w = np.linspace(1.0, 0.1, FEATS).astype(np.float32)
    yield_kg = np.log1p(rain) @ w / 10.0 + 0.02 * (section % 7) + rng.normal(0, 0.05, n)
    return np.log1p(rain) / 4.0, yield_kg.astype(np.float32), section


def build_model():
    keras.utils.set_random_seed(95)
    model = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds, scorer):
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, scorer], verbose=0)
    print("[rainbuckets] fit %.1f s, epoch training %s s, evaluation %.1f s, between epochs %s s"
          % (time.perf_counter() - t, "/".join("%.1f" % v for v in scorer.epoch_train), scorer.seconds,
             "/".join("%.1f" % v for v in scorer.outside)))
    return timer.seconds_per_step()


rng = np.random.default_rng(81)
x_tr, y_tr, _ = gauge_weeks(rng, BATCH * STEPS)
x_ho, y_ho, sec_ho = gauge_weeks(rng, HELD_OUT)
print("[rainbuckets] data ready at %.1f s" % (time.perf_counter() - T0))
ds = tf.data.Dataset.from_tensor_slices((x_tr, y_tr)).shuffle(4096, seed=2).batch(BATCH).repeat().prefetch(2)
scorer = ArchiveScorer(x_ho, y_ho, sec_ho)
full = train(ds, scorer)
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
print("[rainbuckets] normal run: %.4f s/step, evaluation %.1f s of wall %.1f s = %.1f%%, last MAE %.4f"
      % (full, scorer.seconds, wall, 100.0 * scorer.seconds / wall, scorer.history[-1][0]))

if TRUTH:
    one = next(iter(ds))
    scorer2 = ArchiveScorer(x_ho, y_ho, sec_ho)
    compute = train(tf.data.Dataset.from_tensors(one).repeat(), scorer2)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    wall2 = time.perf_counter() - T0
    print("[rainbuckets] truth: full %.4f s/step, compute-only %.4f s/step, input fraction %.3f; "
          "evaluation both runs %.1f s of wall %.1f s = %.1f%%"
          % (full, compute, frac, scorer.seconds + scorer2.seconds, wall2,
             100.0 * (scorer.seconds + scorer2.seconds) / wall2))
