# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""Loops that run inside one ``tf.function``: a custom loop whose function is handed its data.

``@tf.function def train_epoch(dataset): for x, y in dataset: ...`` runs a whole epoch in one
call: AutoGraph turns the ``for`` into a ``scan`` and a ``reduce`` over the dataset, and
``for _ in tf.range(n): x, y = next(iterator)`` into a graph loop over ``IteratorGetNext``.
Python sees one call per epoch, no ``next()`` between steps, and fewer calls than a hot step
function makes (:data:`_tfres_instrument.HOT_CALLS`): before this module such a program read
as start-up, its epochs folded into TensorFlow's set-up.

A function called with a ``tf.data`` dataset or iterator among its arguments
(:func:`iterates_inside`) is such a loop: each call is one record (an epoch, or however many
batches the call reads), and its second call (the first one traces the function) runs under
the profiler for :data:`WINDOW_SECONDS` (:class:`CallWindow`). In the trace, each
read of the loop's input is an event: the ``IteratorGetNext`` op's ``DoCompute``, or, in
AutoGraph's ``scan``, the ``scan``'s read of the dataset beneath it
(``ReduceIterator::...::Scan::FiniteTake``). From the start of one read to the start of the
next is one step; the read is its input wait (:func:`reads_input`).
"""

import shutil
import tempfile
import threading

if __package__:  # tfres's own import (the tests)
    from . import _tfres_xplane
else:  # the child's: the inject folder is on its path
    import _tfres_xplane  # type: ignore[no-redef]

#: how long the profiler runs from the start of the profiled call, at least and at most. The
#: trace's size, and the CPU its collection costs, grows with it: over a whole-epoch function
#: of 15 ms steps a 2 s window cost 2.4 s of CPU a run, 0.5 s cost 0.34 s
#: (docs/benchmarks/instrumentation.md)
WINDOW_SECONDS = 0.5
MAX_WINDOW_SECONDS = 2.0
#: steps the window should hold where their length can be told (:func:`window_seconds`)
WINDOW_STEPS = 5
#: reads needed in the window for a reading: three, so two whole steps lie between them
MIN_READS = 3
#: ``Dataset.cardinality()`` of a dataset that cannot tell its length
UNKNOWN_LENGTH = -2


def iterates_inside(args, kwargs):
    """Whether a tf.function call's arguments hand it a ``tf.data`` dataset or iterator (a
    ``tf.distribute`` one included): then its loop, if it has one, runs inside the call."""
    try:
        from tensorflow.python.data.ops import dataset_ops, iterator_ops
    except ImportError:
        return False
    kinds = [dataset_ops.DatasetV2, iterator_ops.IteratorBase]
    try:
        from tensorflow.python.distribute import input_lib

        kinds += [input_lib.DistributedDatasetInterface, input_lib.DistributedIteratorInterface]
    except (ImportError, AttributeError):
        pass
    kinds = tuple(kinds)
    return any(isinstance(a, kinds) for a in list(args) + list(kwargs.values()))


def window_seconds(calls_seconds, args, kwargs):
    """The window to open before the next call of a function whose calls so far took
    ``calls_seconds``, or None to wait for a later call. Handed a dataset of known length,
    :data:`WINDOW_STEPS` of its steps at the first call's pace (its tracing included: longer,
    not shorter), from the second call. Handed a dataset of unknown length (a generator's,
    a text file's lines), a third of the second call, from the third: a call is one pass
    over the dataset, and the second has no tracing in it (``unseen23/
    input_generator_bearing_vibration``, 12 steps of 210 ms a call, held 2 reads in 0.5 s).
    Else (an iterator: the call's reads are its own affair) :data:`WINDOW_SECONDS`, from
    the second call. Always within :data:`WINDOW_SECONDS` and :data:`MAX_WINDOW_SECONDS`."""
    try:
        from tensorflow.python.data.ops import dataset_ops
    except ImportError:
        return WINDOW_SECONDS
    pace = None
    for arg in list(args) + list(kwargs.values()):
        if isinstance(arg, dataset_ops.DatasetV2):
            try:
                batches = int(arg.cardinality())
            except Exception:  # a dataset that cannot tell: the default window
                break
            if batches > 0:
                pace = WINDOW_STEPS * calls_seconds[0] / batches
            elif batches == UNKNOWN_LENGTH:
                if len(calls_seconds) < 2:
                    return None
                pace = calls_seconds[1] / 3
            break
    return min(MAX_WINDOW_SECONDS, max(WINDOW_SECONDS, pace or 0.0))


class CallWindow:
    """The profiler over :data:`WINDOW_SECONDS` from the start of one call (:meth:`begin`
    before it): a timer thread stops it, in the call or after it (a call runs in TensorFlow's
    runtime, the GIL let go; a step function handed an iterator is called again and again
    meanwhile), or :meth:`stop` does at exit. ``started`` and ``stopped`` bound the window on
    the hook's clock; ``logdir`` holds the trace once it has stopped. Nothing here raises into
    the program: a profiler that cannot start or stop leaves ``error`` set.

    Where the timer's stop finds under :data:`MIN_READS` reads in the trace, the window
    opens again at once, once, for twice as long (within :data:`MAX_WINDOW_SECONDS` of
    tracing in all), and its reading is that second trace's. The profiler's first traced
    work runs slower than the rest: on a loaded machine (two cores, 1-minute load about 8) a
    whole-epoch function's first profiled call took 1.6-4.6 s against 0.6-1.0 s unprofiled,
    and 0.5 s from its start held under 3 reads in 4 runs of 4 (its input wait not
    measured); steps of over a quarter of the window (a step function of 300 ms handed an
    iterator) held 2 reads at most. The first trace is read on the timer's thread, while
    the call it profiles runs in TensorFlow's runtime with the GIL let go; it is read once,
    and at exit :meth:`reading` gives what it found."""

    def __init__(self, seconds=WINDOW_SECONDS, clock=None):
        import time

        self.seconds = seconds  # the window's now: the second's where it opened again
        self.first_seconds = seconds
        self.logdir = None
        self.error = None
        self.started = self.stopped = None
        #: how many times the window opened (2: the first trace held too few reads)
        self.opened = 0
        self._clock = clock or time.perf_counter
        self._lock = threading.Lock()
        self._on = False
        self._closed = False  # stopped at exit: it opens no more
        self._timer = None
        self._reading = None  # the timer's reading of the trace, where it found one

    def begin(self):
        self._open(self.seconds)

    def _open(self, seconds):
        import tensorflow as tf

        self.logdir = tempfile.mkdtemp(prefix="tfres-inside-")
        try:
            tf.profiler.experimental.start(self.logdir)
        except Exception as err:  # the user's own profiler session holds it
            self.error = err
            return
        self._on = True
        self.opened += 1
        self.seconds = seconds
        self.started = self._clock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def stop(self):
        """Stop the profiler (at exit, or the program's work is done): no window opens
        after this."""
        self._closed = True
        self._stop()

    def _stop(self):
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            if not self._on:
                return
            self._on = False
            self.stopped = self._clock()
            try:
                import tensorflow as tf

                tf.profiler.experimental.stop()
            except Exception as err:
                self.error = err

    def _expire(self):
        """The timer's: stop, read the trace, and open the window again, longer, where it
        held under :data:`MIN_READS` reads (see the class's docstring)."""
        self._stop()
        longer = min(2 * self.seconds, MAX_WINDOW_SECONDS - self.seconds)
        if self.opened > 1 or self.error is not None or longer < self.seconds:
            return
        try:
            found = _tfres_xplane.latest_xplane(self.logdir)
            self._reading = reads_input(found) if found is not None else None
        except Exception as err:  # read again at exit, and told there
            self.error = err
            return
        if self._reading is not None:
            return
        with self._lock:
            if self._closed:
                return
            shutil.rmtree(self.logdir, ignore_errors=True)
            self._open(longer)

    def holds(self, begin, end):
        """Whether a call from ``begin`` to ``end`` (the hook's clock) ran in the window."""
        if self.started is None or self.stopped is None:
            return False
        return end > self.started and begin < self.stopped

    def reading(self):
        """:func:`reads_input` of the window's trace, then the trace is removed; None where
        there is none (the profiler failed, or the window held under :data:`MIN_READS`). A
        trace that cannot be read (cut short, corrupt) leaves ``error`` set: the loop's
        steps are written all the same."""
        if self.logdir is None:
            return None
        try:
            if self._reading is not None:
                return self._reading
            found = _tfres_xplane.latest_xplane(self.logdir)
            if self.error is not None or found is None:
                return None
            return reads_input(found)
        except Exception as err:
            self.error = err
            return None
        finally:
            shutil.rmtree(self.logdir, ignore_errors=True)
            self.logdir = None


def _is_scan_read(name):
    """``ReduceIterator::Root::Prefetch::Scan::FiniteTake``: AutoGraph's ``scan`` (the loop's
    body) reading its dataset, the event right beneath the first ``Scan`` of a ``reduce``."""
    parts = name.split("::")
    if parts[0] != "ReduceIterator":
        return False
    for i, part in enumerate(parts):
        if part.startswith("Scan"):
            return len(parts) == i + 2
    return False


def reads_input(path):
    """The loop's reads of its input in the trace at ``path`` (the profiler ran over the
    window alone): ``{"steps", "duration_seconds", "input_seconds"}`` over the whole steps
    between the first and the last read (a step from the start of one read to the start of
    the next, its input the first read), or None with under :data:`MIN_READS` reads."""
    reads = []
    for plane in _tfres_xplane.host_planes(path):
        for name, _, _, start, end, _ in _tfres_xplane.plane_events(plane):
            if _tfres_xplane.is_iterator_read(name) or _is_scan_read(name):
                reads.append((start, end))
    reads.sort()
    if len(reads) < MIN_READS or reads[-1][0] <= reads[0][0]:
        return None
    input_ps = sum(
        min(end, nxt[0]) - start for (start, end), nxt in zip(reads, reads[1:], strict=False)
    )
    return {
        "steps": len(reads) - 1,
        "duration_seconds": (reads[-1][0] - reads[0][0]) / 1e12,
        "input_seconds": input_ps / 1e12,
    }


def call_input(window_wait, duration_seconds, call_seconds, alone_seconds, beside_seconds):
    """A call's input wait, for a function handed its data. ``window_wait``: the window's
    share of reading time given to this call (:func:`reads_input`), or None outside the
    window. ``alone_seconds``: the function alone on a cached batch of its own
    (:class:`_tfres_loopalone.LoopCallAlone`), or None; ``beside_seconds``: how long the pipeline
    worked during the call (its Python's spans, or its native CPU above the call alone's).
    A call that waited in its reads, or beside which the pipeline worked for a quarter of it
    (:func:`_tfres_xplane.slowed_by_input`), lost to its input all it ran above the call
    alone: its waits, and the cores the pipeline took from its math while a batch was ready
    (`unseen21/input_epoch_loop_retail_demand`: 1.3 ms of waiting in a 1.8 s call, a truth of
    54%). Otherwise its window share, or None."""
    if alone_seconds is None:
        return window_wait
    waited = window_wait is not None and _tfres_xplane._waited(window_wait, duration_seconds)
    slower = _tfres_xplane.slowed_by_input(
        waited, duration_seconds, call_seconds, alone_seconds, beside_seconds
    )
    return window_wait if slower is None else min(duration_seconds, max(window_wait or 0.0, slower))


def call_waits(hot, window_elsewhere, note):
    """Each call's input wait, for a function handed its data: the share of the profiler
    window's time that its loop spent reading its input, over each call the window holds;
    None for the others (unprofiled). Notes how it was read, or why it was not (``note``);
    ``window_elsewhere``: the one profiler window was opened, if not over ``hot``."""
    waits = [None] * len(hot.steps)
    head = (
        "custom loop %s reads its data inside the function (a tf.data dataset or iterator "
        "handed to it or captured by it; %d calls)" % (hot.name, len(hot.steps))
    )
    window = hot.window
    reading = window.reading() if window is not None else None
    if reading is None:
        why = "it was called once (the first call traces it)"
        if window is not None and window.error is not None:
            why = "the profiler or its trace failed (%s)" % window.error
        elif window is not None:
            why = "the profiler saw under %d reads of its input" % MIN_READS
            if window.opened > 1:
                why += " in %.1f s, nor in %.1f s more" % (window.first_seconds, window.seconds)
        elif window_elsewhere:
            why = "the profiler's window went to another function handed its data"
        note("%s; its input wait was not measured: %s" % (head, why))
        return waits
    share = reading["input_seconds"] / reading["duration_seconds"]
    for i, (begin, duration) in enumerate(step[:2] for step in hot.steps):
        if window.holds(begin, begin + duration):
            waits[i] = share * duration
    first = min([i + 1 for i, w in enumerate(waits) if w is not None] or [2])
    again = ""
    if window.opened > 1:
        again = " (opened again: the first, of %.1f s, held under %d reads)" % (
            window.first_seconds,
            MIN_READS,
        )
    note(
        "%s; its input wait is read in a profiler trace of %.1f s from call %d%s: %d reads of "
        "its input, %.0f%% of the time from one to the next spent in the read"
        % (
            head,
            window.stopped - window.started,
            first,
            again,
            reading["steps"] + 1,
            100 * share,
        )
    )
    return waits
