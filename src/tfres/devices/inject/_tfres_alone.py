# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""The user's train step alone, on a cached batch: what the step costs with no pipeline running.

A native ``tf.data`` pipeline (a JPEG-decoding ``map``, a CSV parser) or a Python generator
runs on the same cores as the step. While it makes the next batch, the step's math gets
fewer cores and runs longer; the profiler trace marks no op for that, so the trace alone
reads it as compute. The tf.data guide measures input cost as the full step against the
step on one cached batch; this module takes the second half of that measurement inside the
user's own ``fit``, without changing what the program computes:

1. :meth:`StepAlone.arm`, at the step before the profiler window: the model's ``train_function``
   is wrapped for one call. That call pulls its batch (``steps_per_execution`` batches) from
   Keras's own iterator, as the function would have, and runs the same compiled function on
   an iterator over exactly those batches: the user's step runs on its own data, in order.
   The iterator's element spec is kept (shapes relaxed to the original's), so TensorFlow
   reuses the traced function: no retrace, no XLA recompile. Where that spec leaves a
   dimension past the batch's open (``padded_batch`` to the longest, ``group_by_window``
   buckets: batches whose length varies, and the step's math with it), the steps before it
   lend theirs too, up to :data:`LENT_STEPS`, so the step alone is the mean over batches of
   several lengths, not one batch's: `unseen32/input_groupbywindow_ngrams_tickets` lent a
   long one, 19.9 ms alone against window steps of 9-28 ms, and read 4% input against 51%.
2. :meth:`StepAlone.measure`, once ``fit`` has returned (Keras's iterator, and with it the
   pipeline's threads, released; ``tfres run`` does it at exit): every variable of the
   model, its optimizer and its metrics is copied, the function runs once, the process's
   other threads are waited for until they are idle (a pipeline or a ``PyDataset`` worker
   may still be busy after ``fit``), it runs for 0.1 s more (:func:`_tfres_quiet.settle`),
   then 3 to 100 times on the cached batch (more than 3 while they fit in the caller's
   budget, fewer, at least once, where the calls take over half a second:
   :func:`timed_calls`) with no profiler (``plain_times``), then as many times under the
   profiler as the window's calls were (``times``), and every variable is assigned back.
   The model is left exactly as ``fit`` left it.

Not measured (a note says so): under a distribution strategy with more than one replica, for
inputs that are not dense tensors (ragged, sparse), when the copy of the variables would
pass :data:`MAX_COPY_BYTES`, when the profiler cannot be started (another session holds
it), or when ``fit`` stopped on SIGUSR1.
"""

import contextlib
import math
import statistics
import tempfile
import time

if __package__:  # tfres's own import (the Keras callback, the tests)
    from . import _tfres_cached, _tfres_cpu, _tfres_quiet, _tfres_window
else:  # the child's: the inject folder is on its path
    import _tfres_cached  # type: ignore[no-redef]
    import _tfres_cpu  # type: ignore[no-redef]
    import _tfres_quiet  # type: ignore[no-redef]
    import _tfres_window  # type: ignore[no-redef]

#: the variables are copied to host memory while the step is timed; above this, not measured
MAX_COPY_BYTES = 512 * 2**20
#: timed calls of the step alone, once settled (:func:`_tfres_quiet.settle`): at least
#: MIN_CALLS, more up to MAX_CALLS while they fit in the caller's budget. Their mean is the figure
#: (:func:`_tfres_xplane.step_alone_seconds`). A VM's speed can flip between two levels
#: every few tens of ms (calls of 5.8 and 8.2 ms in one run): 20 short calls caught an
#: arbitrary mix, so short steps take as many calls as the budget holds
MIN_CALLS = 3
MAX_CALLS = 100
#: ...but fewer once the calls have run this long: the time they span, not their count,
#: averages a VM's slow and fast spells out, and a long step's three calls cost three steps
#: at exit for nothing more (a 3.5 s CapsNet step: 41 s of exit after a fit of 200 s)
MIN_CALLS_SECONDS = 0.5
#: the steps that lend their batches where the batches' shapes may vary (see the module), as
#: many as the window has lending steps: the step alone is the mean over them, in turn
LENT_STEPS = _tfres_window.LENDING_STEPS

_clock = time.perf_counter
#: above 0 while a step alone is timed: its calls are tfres's, :mod:`_tfres_loops` skips them
TIMING = [0]


class StepAlone:
    """One capture per process, one measurement: ``times``, the timed calls."""

    def __init__(self, note):
        self.note = note  # note(text): the record's notes
        #: -> armed -> captured -> measured | skipped; armed -> waiting again at an earlier
        #: lending step of a pipeline of one shape; later lending steps leave it captured
        self.state = "waiting"
        self.model = None
        self.function = None
        self.cached = None  # the captured batches, repeated, as a dataset of the step's spec
        self.lent = []  # the batches each lending step gave (steps_per_execution of them each)
        self._spec = None  # the element spec of the first lent step's iterator
        self.times = []  # seconds of each timed call, under the profiler as in the window
        self.plain_times = []  # the same calls with no profiler running
        #: the process's CPU seconds in a profiled call, their mean (None until measured)
        self.cpu_seconds = None
        self.plain_cpu_seconds = None  # the same in a plain call
        #: the threads a plain call ran on (:func:`_tfres_cpu.call_threads`), or None
        self.plain_threads = None
        self.quiet = None  # settle's (seconds waited, quiet or None) before the calls

    # -- 1: capture a step's batch, during the step
    def arm(self, model, only_open=False):
        """Wrap ``model.train_function`` so that its next call captures its batches, then
        those of the next lending steps while :meth:`wants_more`. ``only_open``: capture only
        where the batches' shapes may vary (:func:`_open_past_batch`), else let the call be;
        the window's earlier lending steps, so that a pipeline of one shape lends the step
        just before the window, as it did before several could lend."""
        if self.wants_more() and model is self.model:
            _once(model, self._lend_more)  # the state stays "captured": already measurable
            return
        if self.state != "waiting":
            return
        strategy = getattr(model, "distribute_strategy", None)
        if strategy is not None and getattr(strategy, "num_replicas_in_sync", 1) > 1:
            return self._skip("the model trains under a distribution strategy")

        def take(original, iterator):
            return self._capture(model, original, iterator, only_open)

        if not _once(model, take):
            return self._skip("the model has no train function to time")
        self.state = "armed"

    def wants_more(self):
        """Whether another step should lend its batches: the first lent step's element spec
        leaves a dimension past the batch's open, and fewer than :data:`LENT_STEPS` lent."""
        return (
            self.state == "captured"
            and len(self.lent) < LENT_STEPS
            and _open_past_batch(self._spec)
        )

    def _capture(self, model, original, iterator, only_open=False):
        import tensorflow as tf

        spec = getattr(iterator, "element_spec", None)
        if only_open and not (isinstance(iterator, tf.data.Iterator) and _open_past_batch(spec)):
            self.state = "waiting"  # for the next lending step
            return original(iterator)
        leaves = tf.nest.flatten(spec) if spec is not None else []
        if not isinstance(iterator, tf.data.Iterator) or not leaves:
            self._skip("the step's data does not come from a tf.data iterator")
            return original(iterator)
        if not all(type(s) is tf.TensorSpec for s in leaves):
            self._skip("the step's inputs are not all dense tensors")
            return original(iterator)
        batches = _next_batches(iterator, _per_call(model))
        if not batches:  # the iterator is done: let the function say so, as it would have
            self._skip("the window's step had no batch left")
            return original(iterator)
        try:
            cached = _tfres_cached.cached(tf, batches, spec)
            own = iter(cached.take(len(batches)))
        except Exception:
            # the batches are out of Keras's iterator: they must reach the step all the same
            self._skip("the cached batch could not be built")
            return original(batches)  # Keras's path for batches given one by one
        self.model, self.function, self.cached = model, original, cached
        self.lent, self._spec = [batches], spec
        self.state = "captured"
        return original(own)

    def _lend_more(self, original, iterator):
        """A later lending step: its batches join the cached ones, from the same iterator and
        of the same spec. A step that cannot lend them trains as it would have."""
        import tensorflow as tf

        if self.state != "captured" or getattr(iterator, "element_spec", None) != self._spec:
            return original(iterator)
        batches = _next_batches(iterator, _per_call(self.model))
        if not batches:  # the iterator is done: the function says so, as it would have
            return original(iterator)
        try:
            own = iter(_tfres_cached.cached(tf, batches, self._spec).take(len(batches)))
        except Exception:
            return original(batches)  # as in _capture: the batches must reach the step
        self.cached, self.lent = None, self.lent + [batches]  # one dataset of all at exit
        return original(own)

    # -- 2: time the step on the cached batch, after fit
    def measure(self, call_marker, budget_seconds):
        """Time the captured step alone: first with no profiler (``plain_times``), then each
        call inside a ``call_marker`` TraceMe under the profiler as in the window, each
        :data:`MIN_CALLS` to :data:`MAX_CALLS` calls (:func:`timed_calls`), more only while
        they fit in half of ``budget_seconds``; put every variable back. Returns the profiled
        calls' times (seconds), or None. Whatever happens, the model and the batch are let go."""
        if self.state != "captured":
            return None
        self.state = "skipped"  # unless the calls below are timed
        TIMING[0] += 1
        try:
            times = self._timed_calls(call_marker, budget_seconds)
        finally:
            TIMING[0] -= 1
            self.cached = self.model = self.function = None
            self.lent = []
        if times:
            self.times, self.state = times, "measured"
        return times

    def _timed_calls(self, call_marker, budget_seconds):
        import tensorflow as tf

        variables = _state_variables(self.model)
        nbytes = copy_bytes(variables)
        if nbytes > MAX_COPY_BYTES:
            return self._skip(
                "copying the model's %d MiB of variables to time the step alone is above %d MiB"
                % (nbytes >> 20, MAX_COPY_BYTES >> 20)
            )
        if self.cached is None:  # several steps lent: their batches, built after the fit
            lent = [b for group in self.lent for b in group]
            self.cached = _tfres_cached.cached(tf, lent, self._spec)
        own = iter(self.cached)
        marker = tf.profiler.experimental.Trace
        with put_back(variables):
            self.quiet = _tfres_quiet.settle(lambda: sync(self.function(own)), budget_seconds)
            # a step that waits for its input lasts as long as the pipeline takes, whatever
            # the profiler adds to its math: against such steps the plain call is the one
            cpu, threads = [], []
            cycle = len(self.lent) or 1
            self.plain_times = timed_calls(
                lambda: sync(self.function(own)), budget_seconds / 2, cpu, cycle, threads
            )
            self.plain_cpu_seconds = statistics.fmean(cpu)
            self.plain_threads = _tfres_cpu.call_threads(threads)
            try:
                # the window's steps ran under the profiler, which slows some steps by a third
                # (an event per op): against steps that did not wait, the step alone runs
                # under it too, or the two do not compare
                tf.profiler.experimental.start(tempfile.gettempdir())
            except Exception as err:
                return self._skip("the profiler could not be started (%s)" % err)

            def marked():
                with marker(call_marker):  # as the window's calls are marked
                    sync(self.function(own))

            cpu = []
            try:
                times = timed_calls(marked, budget_seconds / 2, cpu, cycle)
                self.cpu_seconds = statistics.fmean(cpu)
                return times
            finally:
                tf.profiler.experimental.stop(save=False)

    def _skip(self, why):
        self.state = "skipped"
        self.cached = self.model = self.function = None
        self.lent = []
        self.note("the step alone (on a cached batch) was not timed: %s" % why)
        return None


def _once(model, take):
    """Wrap ``model.train_function`` for its next call only: ``take(original, iterator)``
    makes that call. False where the model has no train function."""
    original = model.__dict__.get("train_function")
    if original is None:
        return False

    def capture(iterator):
        model.train_function = original  # one call only
        return take(original, iterator)

    model.train_function = capture
    return True


def _per_call(model):
    """The batches a call of the model's train function takes: its ``steps_per_execution``."""
    return max(1, int(getattr(model, "steps_per_execution", 1) or 1))


def _next_batches(iterator, count):
    """Up to ``count`` batches from a tf.data ``iterator``, fewer where it runs out."""
    batches = []
    for _ in range(count):
        nxt = iterator.get_next_as_optional()
        if not nxt.has_value():
            break
        batches.append(nxt.get_value())
    return batches


def _open_past_batch(spec):
    """Whether a tf.data element ``spec`` leaves a dimension past the batch's unknown: its
    batches may differ in length (``padded_batch`` to the longest, ``group_by_window``)."""
    import tensorflow as tf

    if spec is None:
        return False
    return any(
        s.shape.rank is None or any(d is None for d in s.shape.as_list()[1:])
        for s in tf.nest.flatten(spec)
    )


def least_calls(call_seconds):
    """The fewest calls :func:`timed_calls` makes of a call that takes ``call_seconds``."""
    return max(1, min(MIN_CALLS, math.ceil(MIN_CALLS_SECONDS / max(call_seconds, 1e-9))))


def copy_bytes(variables):
    """What copying ``variables`` to host memory takes, in bytes."""
    import numpy as np

    sizes = [np.dtype(getattr(v.dtype, "as_numpy_dtype", v.dtype)).itemsize for v in variables]
    return sum(int(np.prod(v.shape)) * size for v, size in zip(variables, sizes, strict=True))


@contextlib.contextmanager
def put_back(variables):
    """Every variable of ``variables`` assigned back, on leaving, the value it had on entry."""
    saved = [v.numpy() for v in variables]
    try:
        yield
    finally:
        for v, value in zip(variables, saved, strict=True):
            v.assign(value)


def timed_calls(call, budget_seconds, cpu, cycle=1, threads=None):
    """Seconds of :data:`MIN_CALLS` to :data:`MAX_CALLS` calls of ``call`` (fewer than the
    minimum, at least one, once they have run :data:`MIN_CALLS_SECONDS`), more than the
    minimum only while they fit in ``budget_seconds``, and always a whole number of cycles
    of ``cycle`` calls (the lent batches, each call on the next: each as many times); the
    process's CPU seconds in each call are appended to ``cpu``, and each thread's
    (:func:`_tfres_cpu.since`) to ``threads`` where it is a list."""
    times = []
    while (
        not times
        or (len(times) < MIN_CALLS and sum(times) < MIN_CALLS_SECONDS)
        or len(times) % cycle
        or (len(times) < MAX_CALLS and sum(times) + times[-1] <= budget_seconds)
    ):
        before = _tfres_cpu.cpu_seconds() if threads is not None else None
        start, begin = _clock(), time.process_time()
        call()
        times.append(_clock() - start)
        cpu.append(time.process_time() - begin)
        if threads is not None:
            threads.append(_tfres_cpu.since(before))
    return times


# ---------------------------------------------------------------- tfres run's hook

_ONE = []  # type: list  # the process's StepAlone under tfres run
_AT_EXIT = []  # type: list
#: the hook times the step alone in 3 calls, and more while they take less than this in all
BUDGET_SECONDS = 1.0


def for_process(inst):
    """The process's one :class:`StepAlone`, its notes going to ``inst``."""
    if not _ONE:
        _ONE.append(StepAlone(inst.note))
    return _ONE[0]


def times():
    """The process's timed calls of the step alone, under the profiler (empty if none)."""
    return _ONE[0].times if _ONE else []


def plain_times():
    """The same calls timed with no profiler running (empty if none)."""
    return _ONE[0].plain_times if _ONE else []


def plain_cpu_seconds():
    """The process's CPU seconds in a plain call of the step alone, or None."""
    return _ONE[0].plain_cpu_seconds if _ONE else None


def plain_threads():
    """The threads a plain call of the step alone ran on, or None."""
    return _ONE[0].plain_threads if _ONE else None


def after_fit(inst, stopping):
    """Once a fit has captured a step's batch, time the step alone at exit (before TensorFlow's
    own exit handlers, registered earlier), so the program's own fit and timings never pay
    for it."""
    if _ONE and _ONE[0].state == "captured" and not _AT_EXIT:
        import atexit

        _AT_EXIT.append(True)
        atexit.register(time_now, inst, stopping)


def before_fit(model, inst, stopping):
    """Before another model's fit, evaluate or predict: time the step alone now, so no model
    is held past it."""
    if _ONE and _ONE[0].state == "captured" and _ONE[0].model is not model:
        time_now(inst, stopping)


def time_now(inst, stopping):
    """Time the captured step alone, unless the program is stopping (SIGUSR1). Never raises."""
    if not _ONE or _ONE[0].state != "captured" or stopping():
        return
    one = _ONE[0]
    start = time.monotonic()
    try:
        from _tfres_xplane import CALL_MARKER, step_alone_seconds

        calls = one.measure(CALL_MARKER, BUDGET_SECONDS)
    except Exception as err:  # measure has let the model go
        inst.failed("timing the step on a cached batch", err)
        return
    if calls:
        inst.events.write(
            {
                "event": "step_alone",
                "seconds": round(step_alone_seconds(calls), 9),
                "calls_seconds": [round(t, 9) for t in calls],
                "plain_calls_seconds": [round(t, 9) for t in one.plain_times],
                "cpu_seconds": round(one.cpu_seconds, 9),
                "plain_cpu_seconds": round(one.plain_cpu_seconds, 9),
                "plain_threads": None if one.plain_threads is None else len(one.plain_threads),
                **_tfres_quiet.quiet_fields(one.quiet, inst.note),
                "cost_seconds": round(time.monotonic() - start, 6),  # copies, profiler too
                "start_monotonic": start,
            }
        )


def _state_variables(model):
    """Every variable a train step may change: the model's (weights, statistics, seeds), its
    optimizer's (slots, iteration count) and its metrics'; each once."""
    found, seen = [], set()
    groups = [
        getattr(model, "variables", []),
        getattr(getattr(model, "optimizer", None), "variables", []),
        getattr(model, "metrics_variables", []),
    ]
    for group in groups:
        for v in group:
            if id(v) not in seen:
                seen.add(id(v))
                found.append(v)
    return found


def sync(outputs):
    """Wait for the step's results (a device may still be running it when the call returns)."""
    import tensorflow as tf

    for leaf in tf.nest.flatten(outputs):
        if hasattr(leaf, "numpy"):
            leaf.numpy()
            return
