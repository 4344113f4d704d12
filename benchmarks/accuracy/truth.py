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

#: steps of each timed ``fit`` left out before the per-step clock starts: the pipeline's
#: warm-up (the first elements made with nothing to overlap, prefetch buffers filling)
SKIP_STEPS = 5


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


def _steady_clock(skip):
    """A Keras callback noting the start of step ``skip`` and the end of training.

    It overrides batch-*begin* and train-end hooks only (Keras calls them synchronously) and
    declares ``async_safe``, so the fit it times keeps its asynchronous batch-end dispatch."""
    import keras

    class SteadyClock(keras.callbacks.Callback):
        async_safe = True

        def __init__(self):
            super().__init__()
            self.start = self.end = None
            self.batches = 0

        def on_train_batch_begin(self, batch, logs=None):
            self.batches += 1
            if self.batches == skip + 1:
                self.start = time.perf_counter()

        def on_train_end(self, logs=None):
            self.end = time.perf_counter()

        def seconds_per_step(self):
            return (self.end - self.start) / (self.batches - skip)

    return SteadyClock()


def _timed_steps(model, data, steps, skip):
    """(seconds per step of the whole ``fit`` call, seconds per step after ``skip`` steps)."""
    clock = _steady_clock(skip)
    start = time.perf_counter()
    model.fit(data, steps_per_epoch=steps, epochs=1, verbose=0, callbacks=[clock])
    return (time.perf_counter() - start) / steps, clock.seconds_per_step()


def measure(model, make_data, steps, repeats=3, skip=SKIP_STEPS):
    """With --truth: the full step and the step on one cached batch, timed apart, interleaved
    ``repeats`` times; medians.

    A step is timed in the steady state, from the start of step ``skip`` to the end of the
    ``fit``, the same span the instrumentation measures (its window starts after the first
    steps): the ``fit`` call's own start-up (the data adapter peeking at batches, a new
    ``tf.data`` pipeline tracing its ``map`` functions, the iterator's creation, the first
    batches made with nothing to overlap) is a one-off per call, and spread over the call's
    steps it would make the per-step truth depend on how many steps a call has. The whole
    call's figures are reported beside it (``truth_call_*``).

    ``steps``: for a new script, as many as the ``fit`` it trains with (the one ``tfres run``
    watches). A short ``fit``'s steady state can differ from a long one's: in
    ``unseen3/input_pydataset_threads_fingerprints.py`` (2 worker threads) the step waited
    0.545 of its time in 30-step fits and 0.407 in the 400-step one the tool watched."""
    if not TRUTH:
        return
    import statistics

    import tensorflow as tf

    if steps <= skip:
        raise ValueError(f"measure needs more than {skip} steps per fit (got {steps})")
    batch = next(iter(make_data()))
    cached = tf.data.Dataset.from_tensors(tuple(batch)).repeat()
    full, compute, full_call, compute_call = [], [], [], []
    for _ in range(repeats):
        call, step = _timed_steps(model, make_data(), steps, skip)
        full_call.append(call)
        full.append(step)
        call, step = _timed_steps(model, cached, steps, skip)
        compute_call.append(call)
        compute.append(step)
    f, c = statistics.median(full), statistics.median(compute)
    fc, cc = statistics.median(full_call), statistics.median(compute_call)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
        truth_call_full_seconds=fc,
        truth_call_compute_seconds=cc,
        truth_call_input_wait_fraction=max(0.0, (fc - cc) / fc),
    )
