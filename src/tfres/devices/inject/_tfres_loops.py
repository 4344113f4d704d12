# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""Custom training loops in the child (see :mod:`_tfres_instrument`): each call of the
most-called ``tf.function`` is a step, from the end of its previous call to the end of this
one, less the saves between them. Input wait: the time in ``next()`` of tf.data iterators
between two calls, or the Python input timed in the gap (:mod:`_tfres_pyinput`, and the
loop's statements that make the batch, :mod:`_tfres_feed`); for a step
that waited for a tf.data pipeline, or ran while the pipeline's Python ran beside its call
(:class:`_tfres_pyinput.PipelinePython`), also what its call ran above the function alone
(:class:`_tfres_loopalone.LoopCallAlone`, :func:`_tfres_xplane.loop_step_input`); in a
``train_on_batch`` loop, Keras's Python around the call above its level (:mod:`_tfres_tob`). A
function handed its dataset or iterator runs its loop inside each call (:mod:`_tfres_inside`)."""

import atexit
import random
import sys
import threading
import time

import _tfres_alone
import _tfres_cached
import _tfres_cpu
import _tfres_inside
import _tfres_instrument as core
import _tfres_iterators
import _tfres_loopalone
import _tfres_pauses
import _tfres_quiet
import _tfres_tob
from _tfres_loopalone import native_beside
from _tfres_pyinput import (
    GapReading,
    GapSampler,
    PipelinePython,
    python_bounds,
    python_step_input,
    sample_seconds,
)

#: at most this many loop steps are kept
_MAX_LOOP_STEPS = 200000
#: after the window, one gap in this many (drawn at random) of a loop fed from Python is
#: sampled too (:func:`_time_python_input`)
LATER_EVERY = 10


def patch(tf):
    """Time calls of ``tf.function`` and reads of tf.data iterators (once TF is imported)."""
    _patch_tf_function(tf)
    _tfres_iterators.patch()
    try:
        from tensorflow.python.ops import script_ops

        _PIPELINE.patch(script_ops)
    except Exception as err:  # the loops' steps are still timed, only this reading is lost
        core.INSTRUMENT.failed("timing tf.data's Python calls", err)


class _LoopStats:
    __slots__ = (
        "name",
        "calls",
        "steps",
        "last_end",
        "first_start",
        "function",
        "alone",
        "saved_mark",
        "eager",
        "python_mark",
        "inside",
        "window",
        "gap_cpu",
    )

    def __init__(self, name, function):
        self.name = name
        self.calls = 0
        #: (begin, step seconds, input wait or None, seconds inside the call, from tf.data,
        #: seconds of the call during which tf.data's Python ran, the process's CPU seconds
        #: during the call, the reads of a tf.data iterator in the wait: _tfres_iterators)
        self.steps = []
        self.last_end = None
        self.first_start = None
        self.function = function
        self.alone = None  # the window's first call, to time alone at exit (_tfres_alone)
        self.saved_mark = core.INSTRUMENT.saved_seconds  # saves before the step are not its own
        self.eager = False  # an eager loop's optimizer (patch_optimizer), not a tf.function
        self.python_mark = 0.0  # tf.data's Python CPU seconds at its previous eager step
        self.inside = False  # handed its data: its loop runs inside each call (_tfres_inside)
        self.window = None  # then, the profiler over the start of its second call
        self.gap_cpu = _tfres_loopalone.GapCpu()  # its thread on the CPU in its gaps


def _patch_tf_function(tf):
    from tensorflow.python.eager.polymorphic_function import polymorphic_function as pf

    cls = pf.Function
    original = cls.__call__

    def __call__(self, *args, **kwargs):
        if (
            getattr(core._IN_KERAS, "depth", 0)
            or _tfres_alone.TIMING[0]
            or threading.current_thread() is not core._MAIN
        ):
            if not _tfres_alone.TIMING[0]:
                _tfres_pauses.counted_in_epoch_end()  # a callback's own tf.function
            return original(self, *args, **kwargs)
        loop_frame = sys._getframe(1)
        known = core.INSTRUMENT.loops.get(id(self))
        inside = _tfres_inside.iterates_inside(args, kwargs) if known is None else known.inside
        _open_inside_window(known, args, kwargs)
        _PIPELINE.start()  # tf.data's Python from now on, against the calls (a no-op after)
        python_wait = _GAP.stop(sys._getframe())  # Python input since the previous call
        # read outside the call's time: their CPU clocks, about 2 us with two workers
        workers = _tfres_cpu.workers_cpu_seconds() if python_wait is not None else None
        _tfres_loopalone.gap_ended(known)  # the loop's thread's CPU in the gap
        start = core._clock()
        wait, core.INSTRUMENT.iterator_wait = core.INSTRUMENT.iterator_wait, 0.0
        reads, core.INSTRUMENT.iterator_reads = core.INSTRUMENT.iterator_reads, 0
        cpu = _cpu()
        try:
            return original(self, *args, **kwargs)
        finally:
            try:
                end, cpu = core._clock(), _cpu() - cpu
                cpu += _tfres_cpu.workers_cpu_since(workers)
                stats = _loop_call(
                    self,
                    start,
                    end,
                    wait if wait > 0 else python_wait,
                    wait > 0,
                    loop_frame,
                    cpu,
                    inside=inside,
                    reads=reads,
                )
                _tfres_loopalone.gap_began(stats)
                keep = 2 if inside else (core.INSTRUMENT.window or core.DEFAULT_WINDOW)[0]
                if stats.calls == keep:  # a function handed its data: the window's call
                    _keep_call(stats, original, args, kwargs)
            except Exception as err:
                core.INSTRUMENT.failed("timing a tf.function", err)

    cls.__call__ = __call__


def _loop_call(
    fn,
    start,
    end,
    wait,
    from_tf_data,
    loop_frame=None,
    cpu_seconds=0.0,
    name=None,
    python=None,
    inside=False,
    reads=0,
):
    """One call of a tf.function from ``loop_frame``; ``wait``: the input seconds before it
    (tf.data iterators read, or Python input timed in the gap), None where nothing timed it;
    ``cpu_seconds``: the process's CPU time during the call, all its threads (and, after a
    timed gap, its worker processes', :func:`_tfres_cpu.workers_cpu_since`). Without a
    ``loop_frame`` (an eager loop's step, :func:`patch_optimizer`) no gap is sampled, and
    ``python``, the CPU seconds tf.data's Python had run in all when the call began, less
    what it had at this loop's previous step, stands for the pipeline's work beside it.
    ``inside``: the function was handed its data (:func:`_tfres_inside.iterates_inside`), or
    its graph reads an iterator it captured (:func:`_tfres_cached.captures_iterator`);
    ``reads``: the tf.data iterators' ``next()`` calls in ``wait``."""
    inst = core.INSTRUMENT
    stats = inst.loops.get(id(fn))
    if stats is None:
        name = name or getattr(fn, "__name__", "tf.function")
        stats = inst.loops[id(fn)] = _LoopStats(name, fn)
        stats.inside = inside or _tfres_cached.captures_iterator(fn)  # traced by now
    stats.calls += 1
    # a step runs from the end of the previous call to the end of this one
    if stats.last_end is not None:
        begin = stats.last_end
    else:
        begin = start - (wait if isinstance(wait, float) else 0.0)
    if stats.first_start is None:
        stats.first_start = begin
    saved, stats.saved_mark = inst.saved_seconds - stats.saved_mark, inst.saved_seconds
    beside = _PIPELINE.take(start, end)  # lets go of the spans either way
    if python is not None:
        beside, stats.python_mark = python - stats.python_mark, python
    if len(stats.steps) < _MAX_LOOP_STEPS:
        duration = max(0.0, end - begin - saved)
        call = end - start
        stats.steps.append((begin, duration, wait, call, from_tf_data, beside, cpu_seconds, reads))
    stats.last_end = end
    if not from_tf_data and loop_frame is not None and not stats.inside:
        _time_python_input(stats, end - begin, loop_frame)
    return stats


def patch_optimizer(tf):
    """An eager custom loop (``GradientTape`` with no ``tf.function`` on its step) runs no
    function to time: each step ends in one ``optimizer.apply`` (``apply_gradients`` calls
    it), made eagerly, outside ``fit``, on the main thread. Each such call is the step of a
    loop of its own optimizer, from the end of the previous one; its input wait is the time
    in ``next()`` of tf.data iterators since then. Calls made while tracing a tf.function
    (not eager) are not steps: that function's calls are."""
    from keras.src.optimizers.base_optimizer import BaseOptimizer

    original = BaseOptimizer.apply

    def apply(self, *args, **kwargs):
        if not tf.executing_eagerly():
            _tfres_pauses.traced_training(tf)  # the function traced is a training step
            return original(self, *args, **kwargs)
        if getattr(core._IN_KERAS, "depth", 0) or threading.current_thread() is not core._MAIN:
            return original(self, *args, **kwargs)
        _PIPELINE.start()
        start = core._clock()
        wait, core.INSTRUMENT.iterator_wait = core.INSTRUMENT.iterator_wait, 0.0
        python = _PIPELINE.cpu_seconds
        try:
            return original(self, *args, **kwargs)
        finally:
            try:
                name = "%s.apply (an eager loop's step)" % type(self).__name__
                waited = wait if wait > 0 else None
                end = core._clock()
                stats = _loop_call(self, start, end, waited, wait > 0, name=name, python=python)
                stats.eager = True
            except Exception as err:
                core.INSTRUMENT.failed("timing an eager optimizer step", err)

    BaseOptimizer.apply = apply


def _open_inside_window(stats, args, kwargs):
    """Start the profiler before the second call of the first function handed its data (the
    first call traced it), or a later one (:func:`_tfres_inside.window_seconds`), in a program
    with no Keras fit step (:mod:`_tfres_inside`)."""
    if stats is None or not stats.inside or stats.calls not in (1, 2) or _WINDOWS:
        return
    try:
        calls = [step[3] for step in stats.steps[:2]]
        seconds = _tfres_inside.window_seconds(calls, args, kwargs)
        if seconds is not None and not core.INSTRUMENT.fit_steps:
            stats.window = _tfres_inside.CallWindow(seconds, clock=core._clock)
            _WINDOWS.append(stats.window)  # the profiler is one: no other window after it
            stats.window.begin()
    except Exception as err:  # the call runs on, unprofiled
        core.INSTRUMENT.failed("starting the profiler over a loop inside a tf.function", err)


def _keep_call(stats, call, args, kwargs):
    """Keep the arguments of the window's first call of a function, to time the function
    alone on them at exit (before TensorFlow's own exit handlers, registered earlier)."""
    stats.alone = _tfres_loopalone.LoopCallAlone(
        stats.function, call, args, kwargs, core.INSTRUMENT.note
    )
    if not _LOOP_AT_EXIT:
        _LOOP_AT_EXIT.append(True)
        atexit.register(_time_loop_alone)


def _time_loop_alone():
    """At exit: the hot function alone on its kept arguments (see _tfres_loopalone)."""
    hot = _hot_loop()
    for stats in core.INSTRUMENT.loops.values():
        if stats is not hot:
            stats.alone = None  # let go of their arguments
    if hot is None or hot.alone is None:
        return
    start = core._clock()
    try:
        calls = hot.alone.measure(
            _tfres_alone.BUDGET_SECONDS,
            [s[3] for s in hot.steps[1:]],
            gap_seconds=_tfres_loopalone.python_gap_seconds(hot),
            busy_share=_tfres_loopalone.busy_share(hot),
        )
    except Exception as err:
        hot.alone = None
        core.INSTRUMENT.failed("timing the loop's step alone", err)
        return
    if any(step[7] for step in hot.steps):
        try:
            _FLOOR[0] = _tfres_iterators.next_floor_seconds()
        except Exception as err:  # its reads count whole, as before
            core.INSTRUMENT.failed("timing next() on a ready iterator", err)
    if calls:
        floor = {"next_floor_seconds": round(_FLOOR[0], 9)} if _FLOOR[0] is not None else {}
        core.INSTRUMENT.events.write(
            {
                "event": "step_alone",
                "kind": "loop",
                "seconds": round(_tfres_loopalone.alone_seconds(hot), 9),
                "plain_calls_seconds": [round(t, 9) for t in calls],
                "cpu_seconds": round(hot.alone.cpu_seconds, 9),
                **_tfres_loopalone.after_gap_fields(hot.alone),
                **_tfres_tob.fields(hot, core.INSTRUMENT.window or core.DEFAULT_WINDOW),
                **floor,
                **_tfres_quiet.quiet_fields(hot.alone.quiet, core.INSTRUMENT.note),
                "cost_seconds": round(core._clock() - start, 6),
                "start_monotonic": start,
            }
        )


def _time_python_input(stats, step_seconds, loop_frame):
    """Time the Python input before the next call when it falls in the window (steps A..B,
    counted from 0 like Keras's), or, after the window, in one gap in ``LATER_EVERY`` drawn
    at random: only there does the gap's sampler run, and only in the gap; a gap 20 times
    longer than this step (the loop ended) is not measured. A loop whose step read a tf.data
    iterator has its input timed in ``next()``: its gaps are not sampled (the sampler would
    only contend for the GIL with the pipeline's Python).

    The gaps after the window are there for input that runs ahead of the loop: a process
    pool fills its queue while the model is built and the first step traced, and the
    window's steps then take batches made during start-up (``Pool.imap`` read 5% against a
    truth of 84%, ``unseen31/input_mppool_spectrogram_seismic``; its steps 5-24 ran in
    4-7 ms, those from step 100 on in 9-13 ms). Drawn at random, not every n-th, so that a
    loop with a period of its own (a new shard every 10 batches) is not read at one phase."""
    if core.INSTRUMENT.fit_steps:
        return
    first, last = core.INSTRUMENT.window or core.DEFAULT_WINDOW
    if stats.calls < first or (stats.calls > last and _LATER.random() * LATER_EVERY >= 1.0):
        return
    _GAP.start(max(2.0, 20 * step_seconds), loop_frame, every=sample_seconds(step_seconds))


def _seconds(wait):
    """A step's input seconds: a gap's reading resolved (the loop's statements that make the
    step's input, :mod:`_tfres_feed`), or the time in tf.data's ``next()``, or None."""
    if not isinstance(wait, GapReading):
        return wait
    try:
        return wait.seconds()
    except Exception as err:  # the generators' share is still a reading
        core.INSTRUMENT.failed("reading which statements make the loop's input", err)
        return wait.generator_seconds


def _above_floor(wait, reads):
    """A step's time in ``next()`` above what its ``reads`` would take with their elements
    ready (:func:`_tfres_iterators.next_floor_seconds`, timed at exit), or as it was."""
    if wait is None or not reads or _FLOOR[0] is None:
        return wait
    return max(0.0, wait - reads * _FLOOR[0])


def eager_step_input(wait, duration_seconds, python_seconds):
    """An eager loop's step input: its wait in ``next()``, and the CPU seconds tf.data's
    Python ran since the previous step. An eager step is Python dispatching ops, and the
    pipeline's Python holds the GIL it needs: that time is lost to the step (the ops' own
    kernels let go of the GIL; Python beside them costs nothing, and is over-counted)."""
    if wait is None:
        return None
    return min(duration_seconds, wait + max(0.0, python_seconds))


def _hot_loop():
    """The custom loop's step, in a program with no Keras fit step: the tf.function called most
    (at least core.HOT_CALLS times) among those that train, if any do (an evaluation step
    may be called more often, :func:`_tfres_pauses.trains`), unless a function that runs its
    loop inside (``inside``) took longer in all; None otherwise."""
    if core.INSTRUMENT.fit_steps or not core.INSTRUMENT.loops:
        return None
    loops = list(core.INSTRUMENT.loops.values())
    hot = max([s for s in loops if _tfres_pauses.trains(s)] or loops, key=lambda s: s.calls)
    hot = hot if hot.calls >= core.HOT_CALLS else None
    inside = [s for s in core.INSTRUMENT.loops.values() if s.inside and s.steps]
    if inside:
        longest = max(inside, key=_total_seconds)
        if hot is None or _total_seconds(longest) > _total_seconds(hot):
            return longest
    return hot


def _total_seconds(stats):
    return sum(step[1] for step in stats.steps)


def write_steps():
    for window in _WINDOWS:
        window.stop()  # the program ended inside the window
    hot = _hot_loop()
    if hot is None:
        return
    import _tfres_xplane as xplane

    measured = any(step[2] is not None for step in hot.steps)
    starved = sum(1 for step in hot.steps if getattr(step[2], "starved", False))
    alone = _tfres_loopalone.alone_seconds(hot)
    alone_cpu = hot.alone.cpu_seconds if hot.alone is not None else None
    reads_own = hot.alone is not None and hot.alone.reads_input  # next() in its graph
    resume = _tfres_loopalone.resume_seconds(hot.alone, alone)
    inside = (
        _tfres_inside.call_waits(hot, bool(_WINDOWS), core.INSTRUMENT.note) if hot.inside else None
    )
    pauses, trailing = _tfres_pauses.find(hot, core.INSTRUMENT.loops.values())
    waits = [_seconds(s[2]) for s in hot.steps]
    besides = [s[5] if hot.eager else max(s[5], native_beside(s[6], alone_cpu)) for s in hot.steps]
    python = inside is None and not (hot.eager or reads_own)  # a loop fed from Python
    bounds, share = python_bounds(hot.steps, waits, besides, alone, resume, python)
    keras = _tfres_tob.extra_seconds(hot, core.INSTRUMENT.window or core.DEFAULT_WINDOW, python)
    for i, (begin, duration, _, call, from_tf_data, _, _, reads) in enumerate(hot.steps):
        wait, beside = waits[i], besides[i]
        if inside is not None:  # the first call traces the function: not a reading
            wait = _tfres_inside.call_input(inside[i], duration, call, alone, beside) if i else None
        elif hot.eager:
            wait = eager_step_input(wait, duration, beside)
        elif not (from_tf_data or reads_own):
            wait = python_step_input(wait, duration, bounds[i], share)
            wait = _tfres_tob.with_keras(wait, duration, keras)
        else:
            wait = _above_floor(wait, reads if from_tf_data else 0)
            wait = 0.0 if reads_own and wait is None else wait
            wait = xplane.loop_step_input(wait, duration, call, alone, beside)
        if i in pauses:  # the loop's evaluation: its reads are in the wait
            begin, duration, wait = pauses[i][1], begin + duration - pauses[i][1], None
        core.INSTRUMENT.step("loop", i, None, begin, duration, input_wait=wait)
    work_end = _tfres_pauses.write(hot, pauses, trailing, core.INSTRUMENT)
    if starved:
        timed = sum(1 for step in hot.steps if isinstance(step[2], GapReading))
        core.INSTRUMENT.note(
            "custom loop %s: %d of the %d steps timed in their gaps had no sample of the "
            "loop's Python (its thread kept the GIL), so their input wait is not measured"
            % (hot.name, starved, timed)
        )
    core.INSTRUMENT.phase("first step", hot.steps[0][0], hot.steps[0][0] + hot.steps[0][1])
    core.INSTRUMENT.phase("training loop", hot.first_start, hot.last_end, function=hot.name)
    core.INSTRUMENT.last_work_end = max(core.INSTRUMENT.last_work_end or 0, work_end)
    if not measured and not hot.inside:
        core.INSTRUMENT.note(
            "custom loop %s: its input wait was not measured (no tf.data iterator was read "
            "between its calls, and no gap in the window was timed)" % hot.name
        )


#: the process's CPU seconds, all its threads (CLOCK_PROCESS_CPUTIME_ID: about a microsecond)
_cpu = time.process_time
_LOOP_AT_EXIT = []  # type: list
_FLOOR = [None]  # next() on a ready iterator, seconds, timed at exit (_tfres_iterators)
_WINDOWS = []  # type: list  # the one profiler window over a function that loops inside
_GAP = GapSampler(core._clock)
_LATER = random.Random(0)  # the gaps sampled after the window: the same ones run to run
_PIPELINE = PipelinePython(core._clock)
