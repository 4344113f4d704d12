"""Digital archive: classify scanned newspaper pages by decade from page thumbnails.

Bottleneck (memory): the from_generator page decoder keeps every full-resolution
decoded page (256x256x3 float32) in a module-level "decoded page cache" keyed by
(page id, scan pass). The key includes the pass counter, so the cache never hits and
grows by one page per training example: resident memory climbs steadily through
training while the model itself is tiny.
"""
import time
WALL_T0 = time.perf_counter()
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

SCRIPT = os.path.splitext(os.path.basename(__file__))[0]
_ap = argparse.ArgumentParser()
_ap.add_argument("--truth", action="store_true",
                 help="after the normal run, rerun on one reused batch and report truth_input_fraction")
ARGS = _ap.parse_args()


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps, skip=5):
    g = gaps[skip:] if len(gaps) > skip else gaps
    return float(np.mean(g)) if g else float("nan")


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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

    def sec_per_step(self):
        return mean_after_warmup(self.gaps)


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


def finish(full_sec, compute_sec=None, extra=""):
    emit({"steps_per_second": 1.0 / full_sec})
    line = f"[{SCRIPT}] sec/step={full_sec:.4f} steps/s={1.0 / full_sec:.2f}"
    if compute_sec is not None:
        f = truth_fraction(full_sec, compute_sec)
        emit({"truth_input_fraction": f})
        line += f" compute_sec/step={compute_sec:.4f} truth_input_fraction={f:.3f}"
    line += f" wall={time.perf_counter() - WALL_T0:.1f}s" + (" " + extra if extra else "")
    print(line, flush=True)


keras.utils.set_random_seed(71)


import resource

BATCH = 32
FULL = 256
THUMB = 64
N_PAGES = 400
N_CLASSES = 6        # decades 1900s .. 1950s
STEPS = 20
EPOCHS = 3
DECODED_CACHE = {}
TEMPLATES = {}


def decode_page(page_id, scan_pass):
    key = (page_id, scan_pass)
    if key in DECODED_CACHE:
        return DECODED_CACHE[key]
    rng = np.random.default_rng(page_id * 1000 + scan_pass)
    decade = page_id % N_CLASSES
    if decade not in TEMPLATES:
        yy, xx = np.mgrid[0:FULL, 0:FULL].astype(np.float32) / FULL
        paper = 0.9 - 0.05 * decade * (yy + xx) / 2
        columns = (np.sin(xx * np.pi * (4 + decade)) > 0.8).astype(np.float32) * 0.4
        TEMPLATES[decade] = np.stack([paper - columns, paper - columns * 0.9,
                                      paper * (1 - 0.03 * decade) - columns], -1).astype(np.float32)
    grain = rng.standard_normal((FULL // 4, FULL // 4, 3), dtype=np.float32) * 0.04
    page = TEMPLATES[decade] + np.repeat(np.repeat(grain, 4, axis=0), 4, axis=1)
    DECODED_CACHE[key] = page
    return page


def page_stream():
    rng = np.random.default_rng(71)
    scan_pass = 0
    while True:
        scan_pass += 1
        pid = int(rng.integers(N_PAGES))
        page = decode_page(pid, scan_pass)
        thumb = page.reshape(THUMB, FULL // THUMB, THUMB, FULL // THUMB, 3).mean(axis=(1, 3))
        yield thumb, np.int32(pid % N_CLASSES)


def build_model():
    m = keras.Sequential([keras.Input((THUMB, THUMB, 3)),
                          keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
                          keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(),
                          keras.layers.Dense(N_CLASSES)])
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


class RssLog(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.rss = []

    def on_epoch_end(self, epoch, logs=None):
        self.rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20)


def full_dataset():
    sig = (tf.TensorSpec((THUMB, THUMB, 3), tf.float32), tf.TensorSpec((), tf.int32))
    return tf.data.Dataset.from_generator(page_stream, output_signature=sig).batch(BATCH)


def run(ds):
    model = build_model()
    timer, rss = StepTimer(), RssLog()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, rss], verbose=0)
    return timer.sec_per_step(), rss.rss


full, rss = run(full_dataset())
cached = len(DECODED_CACHE)
compute = None
if ARGS.truth:
    batch = next(iter(full_dataset()))
    compute, _ = run(tf.data.Dataset.from_tensors(batch).repeat())
finish(full, compute, extra=f"cached_pages={cached} peak_rss_gib_by_epoch=" + ",".join(f"{r:.2f}" for r in rss))
