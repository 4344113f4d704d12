"""Issue 11 experiment: does a Keras step's own work slow down after an idle gap, with no
input at all? One cached batch; a callback sleeps ``IDLE_MS`` (default 11) before each step,
outside the step, or not at all; steps 5-24 traced and split by tfres's trace reader.

    .venv/bin/python benchmarks/accuracy/tuning/experiments/idle_after_wait.py
"""

import json
import os
import statistics
import sys
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "src", "tfres", "devices", "inject"))
import _tfres_xplane as xplane  # noqa: E402

IDLE_SECONDS = float(os.environ.get("IDLE_MS", "11")) / 1000


class Idle(keras.callbacks.Callback):
    def __init__(self, idle_seconds):
        super().__init__()
        self.idle_seconds, self.trace, self.logdir = idle_seconds, None, None

    def on_train_batch_begin(self, batch, logs=None):
        if self.trace is not None:
            self.trace.__exit__(None, None, None)
            self.trace = None
        if self.idle_seconds:
            time.sleep(self.idle_seconds)
        if batch == 5:
            self.logdir = tempfile.mkdtemp()
            tf.profiler.experimental.start(self.logdir)
        if 5 <= batch < 25:
            self.trace = tf.profiler.experimental.Trace("train", step_num=batch, _r=1)
            self.trace.__enter__()
        if batch == 25:
            tf.profiler.experimental.stop()


model = keras.Sequential(
    [keras.Input((32,)), keras.layers.Dense(128, activation="relu"), keras.layers.Dense(1)]
)
model.compile("adam", "mse")
x = np.ones((64, 32), np.float32)
cached = tf.data.Dataset.from_tensors((x, x[:, :1])).repeat()
model.fit(cached, steps_per_epoch=5, verbose=0)
ms = {}
for _ in range(3):
    for idle in (0.0, IDLE_SECONDS):
        cb = Idle(idle)
        model.fit(cached, steps_per_epoch=30, verbose=0, callbacks=[cb])
        s = xplane.summary(xplane.step_breakdown(xplane.latest_xplane(cb.logdir)))
        for key in ("duration_seconds", "input_seconds", "compute_seconds", "other_seconds"):
            name = "{}_ms_{}".format(key.split("_")[0], "after_idle" if idle else "back_to_back")
            ms.setdefault(name, []).append(s[key] / s["steps"] * 1e3)
print(json.dumps({k: round(statistics.median(v), 2) for k, v in sorted(ms.items())}))
