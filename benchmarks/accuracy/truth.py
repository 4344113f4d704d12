"""The harness's side of the accuracy scripts: where their figures go, and their own truth.

No tfres here or in the scripts: each script trains as users write it, then calls
:func:`report` with its throughput and, run with ``--truth`` (outside tfres), :func:`measure`
times the model's step on one cached batch and the full step, the tf.data guide's method:
input wait = (full - compute only) / full. Figures go to ``$ACCURACY_OUT`` as JSON lines.
"""

import json
import os
import sys
import time

TRUTH = "--truth" in sys.argv


def report(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(values) + "\n")


def timed_fit(model, data, steps, **kwargs):
    """Steps per second of ``model.fit`` over ``steps`` steps (one epoch), timed here."""
    start = time.perf_counter()
    model.fit(data, steps_per_epoch=steps, epochs=1, verbose=0, **kwargs)
    rate = steps / (time.perf_counter() - start)
    report(steps_per_second=rate)
    return rate


def measure(model, make_data, steps, repeats=3):
    """With --truth: the full step and the step on one cached batch, timed apart, interleaved
    ``repeats`` times; medians."""
    if not TRUTH:
        return
    import statistics

    import tensorflow as tf

    batch = next(iter(make_data()))
    cached = tf.data.Dataset.from_tensors(tuple(batch)).repeat()
    full, compute = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        model.fit(make_data(), steps_per_epoch=steps, epochs=1, verbose=0)
        full.append((time.perf_counter() - start) / steps)
        start = time.perf_counter()
        model.fit(cached, steps_per_epoch=steps, epochs=1, verbose=0)
        compute.append((time.perf_counter() - start) / steps)
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
