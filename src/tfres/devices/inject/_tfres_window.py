# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""The profiler window over train steps, shared by ``tfres run``'s hook (:mod:`_tfres_keras`)
and ``tfres.callbacks.ResourceMonitor``: when it starts and stops, which step lends its batch
to the step alone (:mod:`_tfres_alone`), the markers :func:`_tfres_xplane.step_breakdown`
reads (TensorBoard's around each step, tfres's around each call of the train function and
each batch a ``keras.utils.PyDataset`` worker thread makes), worker processes' CPU over the
window, and what the steps around it tell: what the profiler added to each step
(:meth:`ProfilerWindow.profiler_seconds`), the pipeline's work beside a step
(:meth:`ProfilerWindow.cpu_beside_seconds`), an unprofiled step's time outside its call
(:meth:`ProfilerWindow.outside_seconds`).
"""

import functools
import os
import statistics
import time

if __package__:  # tfres's own import (the Keras callback, the tests)
    from . import _tfres_cpu, _tfres_held
else:  # the child's: the inject folder is on its path
    import _tfres_cpu  # type: ignore[no-redef]
    import _tfres_held  # type: ignore[no-redef]

_clock = time.perf_counter
_cpu = time.process_time

#: the steps before the window that may lend their batches to the step alone
#: (:func:`lending_steps`; :data:`_tfres_alone.LENT_STEPS` is this number)
LENDING_STEPS = 3
#: the steps just after the window are not unprofiled steps: the first stops the profiler
#: (or, after a window from step 0, lends its batch to the step alone)
SKIP_AFTER = 2
#: unprofiled steps kept after the window, enough for a steady median; and the fewest whose
#: median stands for the program's speed
LATER_STEPS, MIN_LATER = 100, 5
#: a window's median step this much longer than the unprofiled one (a share of it) is not the
#: profiler's cost alone: the program changed speed (a ``cache()`` filled, other work began).
#: The profiler has been measured at up to 45% of a step (a serial ``map`` of many small TF
#: ops, every one traced): twice the step is far past that...
MAX_PROFILER_SHARE = 1.0
#: ...unless the program ran as fast before the window as after it (medians within this share
#: of each other, over :data:`MIN_BEFORE` steps or more): then only the window was slower, and
#: the profiler made it so (seen: a Keras LSTM's loop of small ops, twice its step traced)
STEADY_SHARE = 0.2
MIN_BEFORE = 3
#: the default window ends early once it has lasted this long and traced
#: :data:`MIN_TRACED` steps: the profiler's cost grows with the ops it traces, and a recurrent
#: step traces every op of its loop. A stacked Keras LSTM's 20 traced steps of 250-450 ms
#: (150 ms unprofiled) took 6 s, and stopping the profiler after them 2.6-3.1 s more, in a
#: fit of 120 steps (unseen30/compute_lstm_energy)
MAX_SECONDS, MIN_TRACED = 2.0, 8
#: ...and at the first step past :data:`MIN_TRACED_COSTLY` traced ones once the profiler's
#: buffer has grown by this much. The profiler keeps every event in memory until it stops,
#: and collecting them then takes the step after the window: over 10 traced steps the
#: LSTM's buffer grew by 535-620 MB (39-101 MB a step) and stopping took 0.64-0.93 s, two
#: to three of its steps; a small MLP's by 2.6-2.7 MB, in 7 ms
#: (``benchmarks/profiler_buffer.py``)
MAX_BUFFER_BYTES, MIN_TRACED_COSTLY = 64 * 2**20, 2
#: the default window's caps (``ProfilerWindow``'s keywords); ``--profile``'s runs whole
DEFAULT_CAPS = {"max_seconds": MAX_SECONDS, "max_buffer_bytes": MAX_BUFFER_BYTES}
#: unprofiled calls after the window whose CPU is read thread by thread: each read costs
#: about 1 us a thread (20 us for 15 threads, 210 us for 200), so not all of the 100
THREAD_CALLS = 30


def profiler_seconds(window_seconds, later_seconds, before_seconds=()):
    """What the profiler added to each step of its window: the window's median step above
    the median unprofiled step after it, in the same epoch, as the program timed both
    (:meth:`ProfilerWindow.timed`). ``0.0`` where the window ran no slower; None where it
    cannot be told: fewer than :data:`MIN_LATER` steps after the window, or a difference above
    :data:`MAX_PROFILER_SHARE` of the unprofiled step where the steps ``before_seconds`` the
    window do not show the program as fast then (:data:`STEADY_SHARE`)."""
    if not window_seconds or len(later_seconds) < MIN_LATER:
        return None
    unprofiled = statistics.median(later_seconds)
    extra = statistics.median(window_seconds) - unprofiled
    steady = len(before_seconds) >= MIN_BEFORE and (
        abs(statistics.median(before_seconds) - unprofiled) <= STEADY_SHARE * unprofiled
    )
    if extra > MAX_PROFILER_SHARE * unprofiled and not steady:
        return None
    return max(0.0, extra)


class ProfilerWindow:
    """The profiler over train steps ``first``-``last``: ``tfres run``'s hook and the
    ``ResourceMonitor`` callback drive it alike, step by step.

    :meth:`begin`, at the start of each train step ``index``: past the window, stop; at the
    steps that lend their batch (:func:`lending_steps`), ``arm(model)`` the step alone (at the
    earlier ones ``arm(model, only_open=True)``); at the window's first step, start the
    profiler in ``new_logdir()`` and mark each call of the model's train function
    (:func:`mark_calls`); inside the window, wrap the step in ``Trace("train",
    step_num=index, _r=1)``, the marker TensorBoard's overview needs and Keras 3 does not
    write. :meth:`end_step` closes it. A profiler that cannot start (the user's own session
    holds it) ends the window: :meth:`begin` raises once, then never starts it again. Once
    it has stopped, ``stopped(window)`` is called (its trace is then in ``logdir``), also
    when stopping failed; :meth:`stop_error` tells the error.

    :meth:`timed` is told each train step's duration (as the caller times it, the same for
    every step): it keeps the window's steps' in ``window_seconds`` and, from the epoch of
    the window's last step, those of up to :data:`LATER_STEPS` steps after the window (past
    the first :data:`SKIP_AFTER`) in ``later_seconds``, the program's speed unprofiled, and
    those before it (:attr:`before_seconds`).

    ``max_seconds``: end the window at the first step past :data:`MIN_TRACED` traced ones
    once it has lasted that long; ``max_buffer_bytes``: at the first step past
    :data:`MIN_TRACED_COSTLY` once the profiler's buffer has grown that much
    (:data:`DEFAULT_CAPS` for the default window; None: run to ``last``). :attr:`last` is
    then the last step traced, and :attr:`ended_early` is True; :attr:`buffer_bytes` tells
    what the buffer held when the window stopped."""

    def __init__(
        self, first, last, marker, arm, stopped=None, max_seconds=None, max_buffer_bytes=None
    ):
        self.first, self.last = first, last
        self.max_seconds = max_seconds
        self.max_buffer_bytes = max_buffer_bytes
        self.ended_early = False
        self._began_at = None  # when the profiler started
        self._rss = []  # the process's resident bytes at each step's start, up to the window's
        #: the profiler's buffer when the window stopped, in bytes (:meth:`_buffer_bytes`)
        self.buffer_bytes = None
        self.state = "waiting"  # -> on -> done
        self.logdir = None
        self._marker = marker
        self._arm = arm
        self._stopped = stopped
        self._trace = None
        self._unmark = None
        self._workers_at = None  # (clock, worker processes' CPU seconds) at the start
        #: CPU of the program's worker processes (a PyDataset's ``use_multiprocessing``
        #: pool) over the window, per second of it; None where it could not be read
        self.workers_share = None
        self.window_seconds = []
        self._later = []  # (step, seconds) of the unprofiled steps after the window
        #: no more of them once the window's epoch or its fit has ended (:meth:`release`): a
        #: second fit's epoch 0 (a model trained again) is not the window's epoch 0
        self._later_closed = False
        self._before = []  # (epoch, seconds) of the steps before the window, past the first
        #: the process's CPU seconds (all its threads) in each call of the train function, by
        #: step, from the window's first to its last unprofiled step: the step's own math and
        #: whatever ran beside it
        self.calls_cpu = {}
        #: the same by thread (:func:`_tfres_cpu.since`), None where not read
        self.calls_threads = {}
        #: each call's wall seconds, by step (:meth:`outside_seconds`)
        self.calls_wall = {}
        self._index = None
        self._traced = False  # whether the profiler started
        self._epoch = None  # the epoch of the window's last traced step
        self._stop_error = None  # what stopping the profiler raised, for stop_error()

    def begin(self, index, model, new_logdir):
        import tensorflow as tf

        if self.max_buffer_bytes is not None and self.state != "done":
            self._rss.append((index, rss_bytes()))
        if self.state == "on" and index <= self.last and self._long_enough(index):
            self.last, self.ended_early = index - 1, True
        if self.state == "on" and index > self.last:
            self.stop()  # and step last + 1 may be the one that lends its batch
        self._index = index
        lending = lending_steps(self.first, self.last)
        if index == lending[-1]:
            self._arm(model)
        elif index in lending:  # only where the batches' shapes may vary
            self._arm(model, only_open=True)
        if self.state == "waiting" and self.first <= index <= self.last:
            self.state = "done"  # unless the profiler starts
            self.logdir = new_logdir()
            tf.profiler.experimental.start(self.logdir)
            self.state = "on"
            self._traced = True
            self._began_at = _clock()
            self._workers_at = (self._began_at, _tfres_cpu.workers_cpu_seconds())
            self._unmark = mark_calls(model, self._marker, self._call_cpu, self._by_thread)
        if self.state == "on":
            self._trace = tf.profiler.experimental.Trace("train", step_num=index, _r=1)
            self._trace.__enter__()

    def _long_enough(self, index):
        """Whether the window has traced enough before step ``index``: ``max_seconds``, or
        ``max_buffer_bytes`` of the profiler's buffer (:meth:`_buffer_bytes`)."""
        traced = index - self.first
        if self.max_buffer_bytes is not None and traced >= MIN_TRACED_COSTLY:
            grown = self._buffer_bytes()
            if grown is not None and grown >= self.max_buffer_bytes:
                return True
        return (
            self.max_seconds is not None
            and traced >= MIN_TRACED
            and _clock() - self._began_at >= self.max_seconds
        )

    def _buffer_bytes(self):
        """What the profiler holds so far, in bytes: the process's resident memory's growth
        since the window's first step, less the program's own growth before the window
        (its median over a step, times the steps traced: a ``cache()`` filling, a list of
        losses) so that only the window's is counted. None where it cannot be read."""
        before = [(i, b) for i, b in self._rss if i < self.first]
        inside = [(i, b) for i, b in self._rss if i >= self.first]
        if len(inside) < 2 or inside[0][1] is None or inside[-1][1] is None:
            return None
        own = [
            later - earlier
            for (i, earlier), (j, later) in zip(before, before[1:], strict=False)
            if i and j == i + 1 and earlier is not None and later is not None
        ]  # past step 0 -> 1: the first step builds and traces the model
        rate = max(0.0, statistics.median(own)) if own else 0.0
        (first, start), (index, now) = inside[0], inside[-1]
        return max(0, int(now - start - rate * (index - first)))

    def _by_thread(self):
        # the unprofiled calls after the window are read by thread, up to THREAD_CALLS
        read = sum(1 for r in self.calls_threads.values() if r is not None)
        return self._index > self.last + SKIP_AFTER and read < THREAD_CALLS

    def _call_cpu(self, cpu_seconds, threads_seconds=None, wall_seconds=None):
        # a step's own call comes first: a later call in it (the step alone's, at exit) is not it
        if self._index not in self.calls_cpu:
            self.calls_cpu[self._index] = cpu_seconds
            self.calls_threads[self._index] = threads_seconds
            self.calls_wall[self._index] = wall_seconds

    def end_step(self):
        if self._trace is not None:
            trace, self._trace = self._trace, None
            trace.__exit__(None, None, None)

    def timed(self, index, epoch, duration_seconds):
        """Train step ``index`` of ``epoch`` lasted ``duration_seconds``."""
        if self.state == "waiting":
            if index:  # the first step traces the function
                self._before.append((epoch, duration_seconds))
            return
        if self.first <= index <= self.last:
            if self._traced:
                self.window_seconds.append(duration_seconds)
                self._epoch = epoch
        elif (
            index > self.last + SKIP_AFTER
            and epoch == self._epoch
            and not self._later_closed
            and len(self._later) < LATER_STEPS
        ):
            self._later.append((index, duration_seconds))
        if index > self.last and (epoch != self._epoch or len(self._later) >= LATER_STEPS):
            self.release()

    def release(self):
        """Put the model's train function back (:func:`mark_calls`). The window leaves it
        marked after the profiler stops, to read the CPU of the unprofiled calls after it,
        until it has :data:`LATER_STEPS` of them or the window's epoch ends. Unprofiled steps
        after this are not the window's (once it has traced)."""
        self._later_closed = self._later_closed or self._traced
        if self._unmark is not None:
            unmark, self._unmark = self._unmark, None
            unmark()

    def cpu_beside_seconds(self, plain_cpu_seconds, plain_threads=None):
        """The pipeline's work beside a step, in CPU seconds, read in the unprofiled calls
        after the window (their median; the profiler's own CPU is in none of them): by
        thread (:meth:`threads_beside_seconds`), else by process
        (:meth:`process_beside_seconds`). None where neither can be read."""
        by_threads = self.threads_beside_seconds(plain_threads)
        if by_threads is not None:
            return by_threads
        return self.process_beside_seconds(plain_cpu_seconds)

    def threads_beside_seconds(self, plain_threads):
        """The CPU of the threads a plain call alone did not run on (``plain_threads``), in
        each call: :func:`_tfres_cpu.beside_seconds`."""
        later = [self.calls_threads.get(i) for i, _ in self._later]
        return _tfres_cpu.beside_seconds(later, plain_threads, MIN_LATER)

    def process_beside_seconds(self, plain_cpu_seconds):
        """The process's CPU in each call above a plain call alone's with no profiler
        (``plain_cpu_seconds``), where threads cannot be told apart. None where fewer than
        :data:`MIN_LATER` calls were read, or the call alone was not."""
        cpu = [self.calls_cpu[i] for i, _ in self._later if i in self.calls_cpu]
        if plain_cpu_seconds is None or len(cpu) < MIN_LATER:
            return None
        return max(0.0, statistics.median(cpu) - plain_cpu_seconds)

    def outside_seconds(self):
        """An unprofiled step's time outside its call of the train function (Keras's loop, the
        callbacks): the median over the steps after the window (:meth:`timed`) of each one's
        duration less its call's; None where fewer than :data:`MIN_LATER` calls were timed."""
        outside = [
            seconds - self.calls_wall[i]
            for i, seconds in self._later
            if self.calls_wall.get(i) is not None
        ]
        return max(0.0, statistics.median(outside)) if len(outside) >= MIN_LATER else None

    @property
    def later_seconds(self):
        """The durations of the unprofiled steps after the window (:meth:`timed`)."""
        return [seconds for _, seconds in self._later]

    @property
    def before_seconds(self):
        """The durations of the steps before the window in its epoch, past the first step."""
        return [seconds for epoch, seconds in self._before if epoch == self._epoch]

    def profiler_seconds(self):
        """What the profiler added to each step of the window (:func:`profiler_seconds`)."""
        return profiler_seconds(self.window_seconds, self.later_seconds, self.before_seconds)

    def stop(self):
        """Stop the profiler if it runs; True if it did. What stopping TensorFlow's profiler
        raised is kept for :meth:`stop_error`, not raised: it must not reach the user's ``fit``.

        It stops here, on the caller's thread, inside the step after the window: collecting
        and writing the trace takes 20-80 ms of a 2-core VM for most models, and grows with
        the profiler's buffer (:data:`MAX_BUFFER_BYTES`). On a thread of its own (the GIL
        is released meanwhile) it cost no less: with both cores busy, the next 6-7 steps
        each ran 10-50 ms slower (docs/benchmarks/instrumentation.md)."""
        if self.state != "on":
            return False
        import tensorflow as tf

        try:
            self.end_step()
            if self.max_buffer_bytes is not None:
                self.buffer_bytes = self._buffer_bytes()
            tf.profiler.experimental.stop()
            self.workers_share = _share_since(self._workers_at)
        except Exception as err:
            self._stop_error = err
        finally:
            self.state = "done"
            if self._stopped is not None:
                self._stopped(self)
        return True

    def stop_error(self):
        """What stopping the profiler raised (:meth:`stop`), told once; or None."""
        error, self._stop_error = self._stop_error, None
        return error


_STATM = _tfres_held.ProcFile("/proc/self/statm")


def rss_bytes():
    """The process's resident memory in bytes (``/proc/self/statm``, read keeping the GIL:
    :mod:`_tfres_held`), or None (not Linux)."""
    text = _STATM.read()
    if text is None:
        return None
    try:
        return int(text.split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, IndexError):
        return None


def _share_since(at):
    """Worker processes' CPU seconds per second since ``at`` (clock, CPU seconds)."""
    if at is None or at[1] is None:
        return None
    now, cpu = _clock(), _tfres_cpu.workers_cpu_seconds()
    if cpu is None or now <= at[0]:
        return None
    return max(0.0, cpu - at[1]) / (now - at[0])


def lending_steps(first, last, count=LENDING_STEPS):
    """The train steps that may lend their batch for a window of steps ``first``-``last``
    (outside the window, so a capture's own time is in no traced step): up to ``count``
    just before it, past step 0 (the first call, which traces), or the one just after a
    window that starts at step 0. All of them lend where the batches' shapes may vary
    (:meth:`_tfres_alone.StepAlone.arm`'s ``only_open``); otherwise only the last, the
    step just before the window."""
    if first <= 0:
        return (last + 1,)
    return tuple(range(max(1, first - count), first)) or (first - 1,)


def mark_calls(model, marker, on_call=None, by_thread=None):
    """Wrap ``model.train_function`` so that each call runs inside a ``marker`` TraceMe (the
    window's calls, read by :func:`_tfres_xplane.step_breakdown`) and tells ``on_call`` the
    process's CPU seconds in it, each thread's where ``by_thread()`` says so as it begins
    (:func:`_tfres_cpu.since`; else None), and its wall seconds, these reads included.
    Returns the undo, which leaves a function someone else set since then alone."""
    import tensorflow as tf

    original = model.__dict__.get("train_function") if model is not None else None
    if original is None:
        return lambda: None
    trace = tf.profiler.experimental.Trace

    def marked(iterator):
        start = _clock()
        wanted = on_call is not None and by_thread is not None and by_thread()
        threads = _tfres_cpu.cpu_seconds() if wanted else None
        begin = _cpu()
        try:
            with trace(marker):
                return original(iterator)
        finally:
            if on_call is not None:
                cpu, by_threads = _cpu() - begin, _tfres_cpu.since(threads)
                on_call(cpu, by_threads, _clock() - start)

    model.train_function = marked

    def undo():
        if model.__dict__.get("train_function") is marked:
            model.train_function = original

    return undo


def mark_items(marker):
    """Wrap Keras's PyDataset worker function (``get_index``, which runs one
    ``__getitem__`` on a worker) so that each batch a worker thread makes runs inside a
    ``marker`` TraceMe, on that thread's line of the trace. Keras looks the function up at
    each batch it hands out, so the wrap holds from the next batch on. The wrapper keeps the
    function's name and module (a process pool pickles it by reference) and, in a worker
    process forked from this one, calls the function alone: TensorFlow is not used there.
    Returns the undo; nothing is wrapped twice, and without Keras's adapter nothing is."""
    try:
        import tensorflow as tf
        from keras.src.trainers.data_adapters import py_dataset_adapter as adapter
    except ImportError:
        return lambda: None
    original = getattr(adapter, "get_index", None)
    if original is None or getattr(original, "_tfres_marked", False):
        return lambda: None

    trace = tf.profiler.experimental.Trace
    owner = os.getpid()

    @functools.wraps(original)
    def get_index(uid, i):
        if os.getpid() != owner:
            return original(uid, i)
        with trace(marker):
            return original(uid, i)

    get_index._tfres_marked = True
    adapter.get_index = get_index

    def undo():
        if adapter.get_index is get_index:
            adapter.get_index = original

    return undo
