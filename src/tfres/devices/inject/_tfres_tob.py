# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""Keras's own Python around the step of a ``train_on_batch`` loop.

    for step in range(steps):
        x, y = make_batch(rng)              # the input, timed in the gap (_tfres_pyinput)
        loss = model.train_on_batch(x, y)   # Keras's Python, its tf.function, Keras's again

Each ``train_on_batch`` runs Python of Keras's own around the loop's hot function (it
resets the metrics, an eager assign each, and turns the logs into floats). That Python falls
in the loop's gaps, where it is the step's cost, not input (:mod:`_tfres_feed`). Beside the
input it runs slower than back to back on one batch, and a truth timed on one batch counts
the difference as input: in the order-slip loop of ``unseen98/input_slipbatcher_orderslips``,
timed without tfres, it took 0.90 and 0.81 ms a step against 0.50 and 0.64 ms on a reused
batch, 1.4-3.2 points of its 12 ms steps (session 66).

So each call is timed whole (:func:`patch`) and the hot function's call inside it taken out
(:func:`called`). At exit the same ``train_on_batch`` runs back to back on the batch of the
window's first step, inside the copy of the variables made to time the function alone
(:meth:`_tfres_loopalone.LoopCallAlone.measure`, :func:`keras_python_alone`). A timed step's
input gains what Keras's Python ran above that (:func:`extra_seconds`): the median over the
loop's steps whose gaps were not sampled (the sampler's ticks land in that Python too), less
the median alone. The hook's own work around the function's call is in the steps read and
not in the calls at exit: ``benchmarks/loop_call_cost.py`` puts it at 21.7 us a call of a
core two arms shared (session 67) and about 37 us of CPU under load (session 63), a bias
upward of 3-11% of the 0.35-0.78 ms read on the loops tuned.
"""

import statistics
import threading
import time

#: the calls of train_on_batch timed at exit (after one to warm up): at least MIN_CALLS,
#: more up to MAX_CALLS while they fit in BUDGET_SECONDS
MIN_CALLS = 5
MAX_CALLS = 50
BUDGET_SECONDS = 0.3
#: at most this many steps' Keras Python are kept, a loop's
MAX_RUNS = 200000

#: id of a loop's _LoopStats -> [(its step's index, Keras's Python in that step, seconds)]
RUNS = {}  # type: dict
_ORIGINAL = []  # type: list  # train_on_batch as Keras defines it


def patch(core):
    """Time each ``train_on_batch`` called on the main thread outside ``fit`` (``core``: the
    hook, :mod:`_tfres_instrument`)."""
    from keras.src.backend.tensorflow.trainer import TensorFlowTrainer

    original = TensorFlowTrainer.train_on_batch
    _ORIGINAL[:] = [original]

    def train_on_batch(self, *args, **kwargs):
        if getattr(core._IN_KERAS, "depth", 0) or threading.current_thread() is not core._MAIN:
            return original(self, *args, **kwargs)
        start = core._clock()
        try:
            return original(self, *args, **kwargs)
        finally:
            try:
                called(core.INSTRUMENT.loops.values(), self, start, core._clock(), args, kwargs)
            except Exception as err:
                core.INSTRUMENT.failed("timing Keras's Python around train_on_batch", err)

    TensorFlowTrainer.train_on_batch = train_on_batch


def called(loops, model, start, end, args, kwargs):
    """A ``train_on_batch`` call from ``start`` to ``end``: Keras's Python in it is its time
    less the call of the loop's function that ended inside it (``loops``: the hook's
    ``_LoopStats``); its arguments are kept where that loop kept its window's first call
    (``alone``), to call it again at exit."""
    for stats in loops:
        if stats.steps and stats.last_end is not None and start <= stats.last_end <= end:
            break
    else:  # no function of a loop ran inside (the first call traced it before timing)
        return
    runs = RUNS.setdefault(id(stats), [])
    if len(runs) < MAX_RUNS:
        runs.append((len(stats.steps) - 1, end - start - stats.steps[-1][3]))
    alone = stats.alone
    if alone is not None and alone.keras_call is None:
        alone.keras_call = (model, args, kwargs)


def keras_python_alone(keras_call, call, function, budget_seconds=BUDGET_SECONDS):
    """Seconds of Keras's Python in each of :data:`MIN_CALLS` to :data:`MAX_CALLS` calls of
    ``train_on_batch`` back to back on the kept arguments (``keras_call``: model, args,
    kwargs), after one to warm up: each call whole less the call of its function inside it.
    ``call``: the function's class's ``__call__`` unwrapped, put in place of the hook's for
    these calls (``function``: one of its functions); the caller puts the variables back."""
    model, args, kwargs = keras_call
    train_on_batch = _ORIGINAL[0] if _ORIGINAL else type(model).train_on_batch
    inner = []

    def timed(self, *a, **k):
        begin = time.perf_counter()
        try:
            return call(self, *a, **k)
        finally:
            inner.append(time.perf_counter() - begin)

    cls = type(function)
    hooked = cls.__dict__.get("__call__")
    cls.__call__ = timed
    times, spent = [], 0.0
    try:
        train_on_batch(model, *args, **kwargs)
        while len(times) < MIN_CALLS or (len(times) < MAX_CALLS and spent < budget_seconds):
            del inner[:]
            start = time.perf_counter()
            train_on_batch(model, *args, **kwargs)
            whole = time.perf_counter() - start
            spent += whole
            times.append(max(0.0, whole - sum(inner)))
    finally:
        if hooked is None:
            del cls.__call__
        else:
            cls.__call__ = hooked
    return times


def extra_seconds(stats, window, python=True):
    """What Keras's Python ran in a step of the loop ``stats`` above its level back to back:
    the median over its steps not sampled (:func:`_plain`), less the median of
    ``stats.alone.keras_times``; 0 where either is missing, or where the loop is not fed
    from Python (``python``)."""
    alone = getattr(stats.alone, "keras_times", None)
    plain = _plain(stats, window)
    if not (python and alone and plain):
        return 0.0
    return max(0.0, statistics.median(plain) - statistics.median(alone))


def _plain(stats, window):
    """Keras's Python in each of the steps of the loop ``stats`` from the ``window``'s first
    (steps ``(first, last)``) whose gaps were not sampled (their wait None)."""
    steps = stats.steps
    return [s for i, s in RUNS.get(id(stats), ()) if i >= window[0] and steps[i][2] is None]


def with_keras(wait, duration_seconds, extra):
    """A step's input ``wait`` with Keras's Python above its level (``extra``) added, at most
    the step; None where the wait was not timed."""
    return None if wait is None else min(duration_seconds, wait + extra)


def fields(stats, window):
    """The record's ``step_alone`` fields for Keras's Python: its calls at exit, and the median
    of the loop's steps :func:`extra_seconds` reads; none where it was not timed."""
    alone = getattr(stats.alone, "keras_times", None)
    plain = _plain(stats, window)
    if not alone or not plain:
        return {}
    return {
        "keras_python_alone_seconds": [round(t, 9) for t in alone],
        "keras_python_seconds": round(statistics.median(plain), 9),
    }
