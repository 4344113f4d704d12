"""Shared pieces of the diagnosis scenarios: a small model, its training step, and a
report line the accuracy runner reads (``TFRES_SCENARIO {json}`` on stdout).

Each scenario is a real TensorFlow program with one known cause; it is run under
``tfres run`` by ``benchmarks/diagnosis_accuracy.py``. Steps are timed with
``tfres.steps.timed`` so the record gets per-step input wait through ``$TFRES_STEPS_FILE``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

FEATURES = 512
WIDTH = 1024


def build(batch: int) -> tuple[Any, Any, Any]:
    """A two-layer MLP, its compiled training step, and one cached batch."""
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((batch, FEATURES), dtype=np.float32))
    y = tf.constant(rng.integers(0, 10, size=(batch,)), dtype=tf.int32)
    model = tf.keras.Sequential(
        [
            tf.keras.Input((FEATURES,)),
            tf.keras.layers.Dense(WIDTH, activation="relu"),
            tf.keras.layers.Dense(WIDTH, activation="relu"),
            tf.keras.layers.Dense(10),
        ]
    )
    opt = tf.keras.optimizers.SGD(0.01)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(xb: Any, yb: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    return step, x, y


def calibrate(step: Any, x: Any, y: Any, *, n: int = 8) -> float:
    """Median seconds of one training step on the cached batch (after 3 warm-up steps)."""
    for _ in range(3):
        float(step(x, y))
    times = []
    for _ in range(n):
        t = time.perf_counter()
        float(step(x, y))
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def report(**fields: Any) -> None:
    """Print the scenario's own figures for the runner (one line, on stdout)."""
    sys.stdout.write("TFRES_SCENARIO " + json.dumps(fields) + "\n")
    sys.stdout.flush()
