"""Newsroom / publishing press-room preflight: check the devices and warm up the
models used by the publishing pipeline (headline classifier, page-layout CNN,
hyphenation tagger), then write a small JSON preflight report.

Bottleneck (startup): this script trains nothing. Its wall time is TensorFlow import,
device listing, model construction/compilation and the first traced predict call of
each model. It never writes to ACCURACY_OUT.
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




def headline_classifier():
    inp = keras.Input((24,), dtype="int32")
    h = keras.layers.Embedding(8000, 64)(inp)
    h = keras.layers.GlobalAveragePooling1D()(h)
    return keras.Model(inp, keras.layers.Dense(12)(keras.layers.Dense(64, activation="relu")(h)), name="headline")


def layout_cnn():
    return keras.Sequential([keras.Input((96, 64, 1)),
                             keras.layers.Conv2D(16, 3, activation="relu"),
                             keras.layers.MaxPooling2D(),
                             keras.layers.Conv2D(32, 3, activation="relu"),
                             keras.layers.GlobalAveragePooling2D(),
                             keras.layers.Dense(5)], name="layout")


def hyphen_tagger():
    inp = keras.Input((32,), dtype="int32")
    h = keras.layers.Embedding(64, 32)(inp)
    h = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(h)
    return keras.Model(inp, keras.layers.Dense(2)(h), name="hyphen")


report = {"tensorflow": tf.__version__, "keras": keras.__version__,
          "devices": [d.name for d in tf.config.list_physical_devices()],
          "logical": [d.name for d in tf.config.list_logical_devices()], "models": {}}
rng = np.random.default_rng(71)
for builder, sample in ((headline_classifier, rng.integers(8000, size=(8, 24))),
                        (layout_cnn, rng.random((8, 96, 64, 1)).astype(np.float32)),
                        (hyphen_tagger, rng.integers(64, size=(8, 32)))):
    t = time.perf_counter()
    m = builder()
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    out = m.predict(sample, verbose=0)
    report["models"][m.name] = {"params": int(m.count_params()), "out_shape": list(out.shape),
                                "seconds": round(time.perf_counter() - t, 3)}

tmp = tempfile.mkdtemp(prefix=f"u71_{SCRIPT}_")
try:
    path = os.path.join(tmp, "preflight.json")
    with open(path, "w") as fh:
        json.dump(report, fh, indent=1)
    size = os.path.getsize(path)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print(f"[{SCRIPT}] devices={len(report['devices'])} models={len(report['models'])} "
      f"report_bytes={size} wall={time.perf_counter() - WALL_T0:.1f}s", flush=True)
