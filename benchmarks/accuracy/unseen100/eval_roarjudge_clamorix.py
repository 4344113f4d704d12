import time; T0 = time.perf_counter()
"""Audience noise level classifier with a heavy end-of-epoch evaluation.

Microphones around the ring log the audience's sound level in short frames;
the model tags each frame (applause, laughter, gasp, chatter, silence).  The
training set is small, but after every epoch the producer wants predictions
over the full archive of past shows, so an on_epoch_end callback runs
model.predict over a large held-out set and scores it.
"""
import os
import sys
import json

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 64
EPOCHS = 4
STEPS_PER_EPOCH = 60
N_BANDS = 40
N_CLASSES = 5
N_HELDOUT = 600_000


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


class ArchiveScore(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x = x
        self.y = y
        self.seconds = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        logits = self.model.predict(self.x, batch_size=512, verbose=0)
        acc = float((logits.argmax(axis=1) == self.y).mean())
        self.seconds += time.perf_counter() - t
        print(f"[clamorix]   epoch {epoch}: archive accuracy {acc:.3f}")


def make_frames(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N_CLASSES, n)
    centers = np.linspace(30, 100, N_CLASSES)
    x = (centers[y][:, None] + rng.normal(0, 12, (n, N_BANDS))
         + 5 * np.sin(np.arange(N_BANDS) * (y[:, None] + 1) / 7.0)) / 100.0
    return x.astype(np.float32), y.astype(np.int64)


def build_model():
    model = keras.Sequential([
        keras.Input(shape=(N_BANDS,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(N_CLASSES),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(ds, heldout):
    timer = StepTimer()
    scorer = ArchiveScore(*heldout)
    model = build_model()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH,
              callbacks=[timer, scorer], verbose=0)
    return timer.seconds_per_step(), scorer.seconds


def main():
    x, y = make_frames(BATCH * STEPS_PER_EPOCH, 9)
    heldout = make_frames(N_HELDOUT, 10)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(4096, seed=9).repeat().batch(BATCH).prefetch(2)
    keras.utils.set_random_seed(9)
    full, eval_s = train(ds, heldout)
    wall = time.perf_counter() - T0
    emit({"steps_per_second": 1.0 / full})
    print(f"[clamorix] fit + archive predict: {full*1000:.1f} ms/step, "
          f"evaluation {eval_s:.1f}s = {eval_s/wall:.1%} of wall {wall:.1f}s")
    if TRUTH:
        batch = next(iter(ds))
        keras.utils.set_random_seed(9)
        compute, eval2 = train(tf.data.Dataset.from_tensors(batch).repeat(), heldout)
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        wall = time.perf_counter() - T0
        print(f"[clamorix] truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, "
              f"input fraction {frac:.3f}; evaluation {eval_s+eval2:.1f}s = "
              f"{(eval_s+eval2)/wall:.1%} of wall {wall:.1f}s")


if __name__ == "__main__":
    main()
