"""Zoo enclosure behaviour monitoring with a leaking audit buffer (u77).

Domain: a zoo's animal-welfare team classifies stereotypic behaviour
(pacing, swaying, resting, foraging, social) from enclosure CCTV. Frames
are decoded at 240x320 and downsampled to 64x64 for the model.
Data path: Python generator (synthetic frame decode, downsample) ->
tf.data.Dataset.from_generator -> batch -> model.fit. For "welfare audit"
the generator appends every full-resolution float32 frame it decodes to a
module-level list that is never trimmed.
Deliberate bottleneck: memory -- the audit buffer grows by ~0.9 MB per
sample, so RSS climbs steadily through training (the model is tiny).
"""
import time

_WALL0 = time.perf_counter()

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


def _emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def _sec_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now


_NORMAL_WALL = [None]


def _mark():
    """Record the process wall time at the end of the normal (non-truth) run."""
    _NORMAL_WALL[0] = time.perf_counter() - _WALL0


def _finish(script, full, compute=None, extra=""):
    _emit({"steps_per_second": 1.0 / full})
    line = "%s: %.4f s/step (%.2f steps/s)" % (script, full, 1.0 / full)
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        _emit({"truth_input_fraction": frac})
        line += " | one-batch %.4f s/step | truth_input_fraction %.3f" % (compute, frac)
    if _NORMAL_WALL[0] is not None:
        line += " | wall at end of normal run %.1f s" % _NORMAL_WALL[0]
    line += " | wall %.1f s" % (time.perf_counter() - _WALL0)
    if extra:
        line += " | " + extra
    print(line, flush=True)


def _args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    return p.parse_args()
SCRIPT = "memory_auditbuffer_enclosurecams"
BATCH = 16
STEPS = 60
EPOCHS = 2
H, W = 240, 320
AUDIT_TRAIL = []


def _rss_mib():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def make_dataset(seed):
    def gen():
        rng = np.random.default_rng(seed)
        while True:
            cls = int(rng.integers(0, 5))
            frame = rng.random((H, W, 3), dtype=np.float32) * 0.3
            cy = int(rng.integers(40, H - 40))
            cx = int(40 + (cls * 50 + rng.integers(0, 40)) % (W - 80))
            frame[cy - 30:cy + 30, cx - 30:cx + 30] += 0.6
            AUDIT_TRAIL.append(frame)
            small = frame[::H // 64, ::W // 64][:64, :64]
            yield small.astype(np.float32), cls

    sig = (tf.TensorSpec((64, 64, 3), tf.float32), tf.TensorSpec((), tf.int32))
    return tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH)


class RssProbe(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.samples = []

    def on_epoch_end(self, epoch, logs=None):
        self.samples.append(_rss_mib())


def build_model():
    m = keras.Sequential([
        keras.Input((64, 64, 3)),
        keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(5),
    ])
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    keras.utils.set_random_seed(77)
    model = build_model()
    timer, probe = StepTimer(), RssProbe()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, probe], verbose=0)
    return _sec_per_step(timer.gaps), probe.samples


def main():
    args = _args()
    start = _rss_mib()
    full, rss = train(make_dataset(1))
    _mark()
    compute = None
    if args.truth:
        batch = next(iter(make_dataset(2)))
        compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
    _finish(SCRIPT, full, compute, "RSS MiB start %.0f, after each epoch %s, audit frames %d" % (
        start, [round(r) for r in rss], len(AUDIT_TRAIL)))


if __name__ == "__main__":
    main()
