# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""A custom loop's hot ``tf.function`` alone, on the arguments of one of its calls: what a
call costs with no pipeline running beside it (a Keras fit's step alone is
:mod:`_tfres_alone`, whose timing helpers this module shares)."""

import statistics
import time

if __package__:  # tfres's own import (the tests)
    from . import _tfres_alone, _tfres_cached, _tfres_quiet, _tfres_tob
else:  # the child's: the inject folder is on its path
    import _tfres_alone  # type: ignore[no-redef]
    import _tfres_cached  # type: ignore[no-redef]
    import _tfres_quiet  # type: ignore[no-redef]
    import _tfres_tob  # type: ignore[no-redef]

#: a loop's function alone is timed at exit only where its calls fit in this: a whole-epoch
#: function's call is an epoch's math (four of 0.9 s added 3.9 s to a 28 s run, set 24)
MAX_EXIT_SECONDS = 10
#: a loop fed from Python leaves its function idle between calls while it makes the next
#: batch, and TensorFlow's threads go to sleep: a call after the gap runs slower than back
#: to back. Where the loop's gaps last at least MIN_GAP_SECONDS, GAP_CALLS calls are also
#: timed each after a gap as long as the loop's (at most MAX_GAP_SECONDS: the threads have
#: long gone to sleep by then), for calls of under MAX_GAP_CALL_SECONDS. The gap is spent
#: as the loop's thread spent its own: on the CPU for its busy share, asleep for the rest
#: (:func:`after_idle_gaps`)
MIN_GAP_SECONDS = 0.001
MAX_GAP_SECONDS = 0.25
MAX_GAP_CALL_SECONDS = 0.5
GAP_CALLS = 5


class LoopCallAlone:
    """A custom loop's hot ``tf.function`` alone on the arguments of one of its calls: what a
    call costs with no pipeline running beside it.

    ``tfres run``'s hook keeps the arguments of one call (``call(function, *args, **kwargs)`` is
    the unwrapped call). At exit :meth:`measure` copies every variable the function's graph uses
    (the model's, the optimizer's, the metrics'), calls it once to warm up and
    :data:`_tfres_alone.MIN_CALLS` to :data:`_tfres_alone.MAX_CALLS` times more within the
    budget (fewer than the minimum for long calls: :func:`_tfres_alone.timed_calls`), and
    assigns every variable back. A function that reads tf.data itself (an iterator
    or a dataset handed to it, or an iterator its graph captured) is called on one cached batch
    of its own instead (:func:`_tfres_cached.on_cached_input`; ``reads_input`` is then True).
    Not timed, with a note: arguments other than tensors, arrays, plain values, tf.data
    iterators and datasets (a distributed value, say), a function whose input cannot be cached
    (a dataset it captured, one of unknown length), or variables above
    :data:`_tfres_alone.MAX_COPY_BYTES`."""

    def __init__(self, function, call, args, kwargs, note):
        self.note = note
        self.times = []
        #: the process's CPU seconds in a timed call, their mean (None until measured)
        self.cpu_seconds = None
        self.quiet = None  # as StepAlone.quiet
        self.reads_input = False  # the function reads tf.data itself (measure() tells)
        #: seconds of calls each made after an idle gap as long as the loop's (or none)
        self.after_gap_times = []
        self.after_gap_busy_share = None  # of each of those gaps, spent on the CPU
        #: a train_on_batch loop's call of Keras (model, args, kwargs; _tfres_tob.called), and
        #: the seconds of Keras's own Python in each of its calls timed at exit
        self.keras_call = None
        self.keras_times = None
        self._call = None
        self._function = function
        self._arguments = (args, kwargs)
        refused = _refused_arguments(args, kwargs)
        if refused:
            self._skip(refused)
        else:
            self._call = call

    def measure(self, budget_seconds, calls_seconds=(), gap_seconds=None, busy_share=0.0):
        """The timed calls' seconds, or None; the arguments are let go either way.
        ``calls_seconds``: how long the program's calls took. Where the least calls
        (:func:`_tfres_alone.least_calls`) and a warm-up would take longer than
        :data:`MAX_EXIT_SECONDS` (a whole epoch a call), the call is not timed.
        ``gap_seconds``: the loop's typical gap between two calls, where it is fed from
        Python; calls after an idle gap that long are then timed too (``after_gap_times``),
        the loop's thread on the CPU for ``busy_share`` of each gap (:func:`busy_share`)."""
        call, self._call = self._call, None
        (args, kwargs), self._arguments = self._arguments, ((), {})
        if call is None:
            self.keras_call = None
            return None
        if calls_seconds:
            typical = statistics.median(calls_seconds)
            least = _tfres_alone.least_calls(typical) + 1  # and the warm-up
            if least * typical > MAX_EXIT_SECONDS:
                return self._skip(
                    "a call takes %.1f s, and timing %d calls at exit would take over %d s"
                    % (typical, least, MAX_EXIT_SECONDS)
                )
        variables = list(self._function.get_concrete_function(*args, **kwargs).variables)
        try:
            run, self.reads_input = _tfres_cached.on_cached_input(
                self._function, call, args, kwargs
            )
        except _tfres_cached.Refused as why:
            return self._skip(str(why))
        nbytes = _tfres_alone.copy_bytes(variables)
        if nbytes > _tfres_alone.MAX_COPY_BYTES:
            return self._skip(
                "copying the loop's %d MiB of variables is above %d MiB"
                % (nbytes >> 20, _tfres_alone.MAX_COPY_BYTES >> 20)
            )

        cpu = []
        with _tfres_alone.put_back(variables):
            self.quiet = _tfres_quiet.settle(lambda: _tfres_alone.sync(run()), budget_seconds)
            self.times = _tfres_alone.timed_calls(
                lambda: _tfres_alone.sync(run()), budget_seconds, cpu
            )
            if (
                gap_seconds is not None
                and gap_seconds >= MIN_GAP_SECONDS
                and not self.reads_input  # its gaps make no batch: nothing reads these
                and statistics.fmean(self.times) < MAX_GAP_CALL_SECONDS
            ):
                self.after_gap_busy_share = busy_share
                self.after_gap_times = after_idle_gaps(
                    lambda: _tfres_alone.sync(run()),
                    min(gap_seconds, MAX_GAP_SECONDS),
                    busy_share,
                )
            self._time_keras(call)
        self.cpu_seconds = statistics.fmean(cpu)
        return self.times

    def _time_keras(self, call):
        """Keras's Python around the function in a ``train_on_batch`` loop, back to back on
        the kept batch (:func:`_tfres_tob.keras_python_alone`), where the loop calls it."""
        keras_call, self.keras_call = self.keras_call, None
        if keras_call is None or self.reads_input:
            return
        try:
            self.keras_times = _tfres_tob.keras_python_alone(keras_call, call, self._function)
        except Exception as err:  # the function alone is still timed
            self.note("Keras's Python in train_on_batch was not timed at exit: %r" % err)

    def _skip(self, why):
        self._call = None
        self.keras_call = None
        self._arguments = ((), {})
        self.note("the loop's step alone (on one of its batches) was not timed: %s" % why)
        return None


def after_idle_gaps(call, gap_seconds, busy_share=0.0, calls=GAP_CALLS):
    """Seconds of ``calls`` calls of ``call``, each made after a gap of ``gap_seconds``: a call as
    the loop makes it, its function idle while the next batch is made, without the making. Back
    to back, TensorFlow's threads are awake and its data warm; after a gap they are not (a
    5.0-5.4 ms ``train_on_batch`` ran 7.0 ms after 10 ms of sleep, 7.2-7.3 ms after 10 ms of
    Python; ``benchmarks/accuracy/call_after_gap.py``). Each gap is asleep, then for its last
    ``busy_share`` (0 to 1, :func:`busy_share`) on the CPU, as a loop that makes its batch right
    before the call: a Conv2D ``train_on_batch``
    (``call_after_gap.py --model conv --gap-ms 34``) ran 1.11-1.12 times as long as back to
    back after a sleep, 1.27-1.36 times after a pure-Python busy loop; in
    ``unseen81/input_tobloop_gravestones``'s own loop, 23.6-25.8 ms against 15.6-17.3 back to
    back and 17.6-20.7 after a sleep (session 59)."""
    busy = gap_seconds * busy_share
    times = []
    for _ in range(calls):
        time.sleep(gap_seconds - busy)
        until = time.perf_counter() + busy
        while time.perf_counter() < until:
            pass
        start = _tfres_alone._clock()
        call()
        times.append(_tfres_alone._clock() - start)
    return times


class GapCpu:
    """A loop's thread on the CPU in its gaps (a ``_LoopStats``'s ``gap_cpu``): the share of
    each gap (:func:`gap_ended`), one a step as long as its steps are kept, and the thread's
    CPU and the wall time at the end of its last call (:func:`gap_began`; None before)."""

    __slots__ = ("shares", "cpu_mark", "wall_mark")

    def __init__(self):
        self.shares = []
        self.cpu_mark = None
        self.wall_mark = None


def gap_ended(stats):
    """At a loop's call, before it: the share of the gap since the end of the previous call
    that its thread spent on the CPU, kept in ``stats.gap_cpu.shares``.
    ``stats``: the loop's ``_LoopStats``, or None before its first call."""
    if stats is None or stats.gap_cpu.wall_mark is None:
        return
    gap = stats.gap_cpu
    took = time.perf_counter() - gap.wall_mark
    if took > 0 and len(gap.shares) < len(stats.steps):
        gap.shares.append((time.thread_time() - gap.cpu_mark) / took)


def gap_began(stats):
    """At the end of a loop's call: where its gap's CPU and wall time are counted from."""
    stats.gap_cpu.cpu_mark, stats.gap_cpu.wall_mark = time.thread_time(), time.perf_counter()


def busy_share(stats):
    """The share of a loop's typical gap its thread spent on the CPU: the median over its
    gaps (0 to 1; 0 where none was timed), so that a pause for evaluation or a save every
    so many steps does not count. A parser or NumPy making the batch is on the CPU, a read
    from disk or a queue is not. The hook's own work in the gap (the sampler's handler)
    counts too."""
    shares = stats.gap_cpu.shares
    return min(1.0, max(0.0, statistics.median(shares))) if shares else 0.0


def python_gap_seconds(stats):
    """The median gap between the end of one call and the next call in a loop fed from
    Python (its steps that read no tf.data), where it makes its batches; None for eager
    loops, loops that read inside their function, and loops over tf.data. ``stats``: the
    loop's ``_tfres_loops._LoopStats``, its steps ``(begin, duration, wait, call,
    from_tf_data, ...)``."""
    if stats.eager or stats.inside:
        return None
    gaps = [step[1] - step[3] for step in stats.steps[1:] if not step[4]]
    return statistics.median(gaps) if gaps else None


def after_gap_fields(alone):
    """The record's ``step_alone`` fields for the calls after a gap of ``alone`` (a
    :class:`LoopCallAlone`): none where they were not timed."""
    if not alone.after_gap_times:
        return {}
    return {
        "after_gap_calls_seconds": [round(t, 9) for t in alone.after_gap_times],
        "after_gap_busy_share": round(alone.after_gap_busy_share, 4),
    }


def alone_seconds(stats):
    """A loop's function alone, the mean of its calls timed at exit
    (:func:`_tfres_xplane.step_alone_seconds`), or None; ``stats``: the loop's ``_LoopStats``."""
    import _tfres_xplane as xplane

    times = stats.alone.times if stats.alone is not None else []
    return xplane.step_alone_seconds(times) if times else None


def resume_seconds(alone, alone_seconds):
    """What a call of the loop's function costs more after an idle gap as long as the loop's
    than back to back: the mean of ``alone``'s calls after a gap (a :class:`LoopCallAlone`,
    or None) less ``alone_seconds``, the mean of its calls back to back (as
    ``_tfres_xplane.step_alone_seconds``); 0 where either was not timed."""
    after = alone.after_gap_times if alone is not None else []
    if not after or alone_seconds is None:
        return 0.0
    return max(0.0, statistics.fmean(after) - alone_seconds)


def _refused_arguments(args, kwargs):
    """Why the loop's call cannot be made again on these arguments, or None."""
    import numpy as np
    import tensorflow as tf
    from tensorflow.python.data.ops import dataset_ops, iterator_ops

    plain = (int, float, bool, str, bytes, type(None), np.ndarray, np.generic)
    data = (iterator_ops.OwnedIterator, dataset_ops.DatasetV2)  # made again on a cached batch
    for leaf in tf.nest.flatten((args, kwargs)):
        if isinstance(leaf, tf.Variable) or not isinstance(leaf, (tf.Tensor, *plain, *data)):
            return "an argument is a %s, not a tensor or an array" % type(leaf).__name__
        if isinstance(leaf, tf.Tensor) and not hasattr(leaf, "numpy"):
            return "an argument is a symbolic tensor"
    return None


def native_beside(cpu_seconds, alone_cpu_seconds):
    """What the rest of the process did during a loop's call, in CPU seconds: the process's
    CPU time during the call above the function's own CPU time alone (the mean of its calls
    at exit, :class:`LoopCallAlone`). In a loop over tf.data this is the pipeline's native
    work on tf.data's threads (a ``map`` of TensorFlow ops refilling the prefetch buffer),
    which no Python span marks and which takes cores from the call as the pipeline's Python
    does. 0 where the call alone was not timed."""
    if alone_cpu_seconds is None or cpu_seconds is None:
        return 0.0
    return max(0.0, cpu_seconds - alone_cpu_seconds)
