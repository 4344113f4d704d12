"""Influencer posts: thumbnail engagement classifier fed by a Python generator that keeps
every augmented batch in a "near-duplicate" cache that is never evicted.

Bottleneck (memory): the generator stores float64 copies of each source and augmented batch keyed by a
content hash (meant for duplicate detection), so the process RSS grows by ~12.6 MB per step.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of every training batch; gaps only within an epoch."""

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

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

import hashlib
import resource

SEED = 6512
SIZE = 64
BATCH = 64
STEPS = 30
EPOCHS = 3


def rss_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20


class ThumbnailStream:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.seen = {}  # hash -> augmented batch (float64); grows forever
        base = self.rng.random((256, SIZE, SIZE, 3), dtype=np.float32)
        self.base = base
        self.labels = self.rng.integers(0, 3, 256).astype(np.int32)

    def augment(self, ids):
        x = self.base[ids].copy()
        flip = self.rng.random(len(ids)) < 0.5
        x[flip] = x[flip, :, ::-1]
        x *= self.rng.uniform(0.8, 1.2, (len(ids), 1, 1, 1)).astype(np.float32)
        x += self.rng.normal(0, 0.02, x.shape).astype(np.float32)
        return np.clip(x, 0, 1)

    def __call__(self):
        while True:
            ids = self.rng.integers(0, 256, BATCH)
            x = self.augment(ids)
            key = hashlib.md5(x[:, ::8, ::8].tobytes()).hexdigest()
            if key not in self.seen:
                # the leak: source and augmented pixels kept as float64 "for audit", never evicted
                self.seen[key] = (self.base[ids].astype(np.float64), x.astype(np.float64))
            yield x, self.labels[ids]


class RssLogger(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.trace = []

    def on_epoch_end(self, epoch, logs=None):
        self.trace.append(round(rss_gib(), 2))


def build_model():
    m = keras.Sequential([
        keras.Input((SIZE, SIZE, 3)),
        keras.layers.Conv2D(8, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(3)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    stream = ThumbnailStream(SEED)
    sig = (tf.TensorSpec((BATCH, SIZE, SIZE, 3), tf.float32), tf.TensorSpec((BATCH,), tf.int32))
    ds = tf.data.Dataset.from_generator(stream, output_signature=sig)

    keras.utils.set_random_seed(SEED)
    model = build_model()
    timer, rss = StepTimer(), RssLogger()
    start_rss = rss_gib()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, rss], verbose=0)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    print(f"[influencerposts] fit {full * 1000:.1f} ms/step; peak RSS before fit {start_rss:.2f} GiB, "
          f"after each epoch {rss.trace} GiB; cache holds {len(stream.seen)} batches; "
          f"wall so far {time.perf_counter() - _T0:.1f}s")

    if args.truth:
        xb, yb = next(iter(ThumbnailStream(SEED + 1)()))
        one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        keras.utils.set_random_seed(SEED)
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
        comp = timer2.sec_per_step()
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[influencerposts] truth: full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
