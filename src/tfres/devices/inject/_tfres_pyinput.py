# ruff: noqa: UP004  (child-side: the style of sitecustomize.py, no tfres imports)
"""Input wait of custom loops fed from Python: the time spent producing the next batch in
Python between two calls of the loop's ``tf.function``.

    for x, y in batches():        # a Python generator, an iterator class, ds[i] ...
        loss = train_step(x, y)   # the hot tf.function

The time inside the outermost generator frame, or ``__next__`` / ``__getitem__`` method,
entered from the loop is input. A generator's ``__next__`` cannot be wrapped from outside,
so :class:`GapSampler` looks at the loop thread's stack instead: from the end of one call of
the hot function to the start of the next (only in the gaps timed: the window's, and one in
10 after it, :func:`_tfres_loops._time_python_input`), it is sampled every half millisecond
(every fortieth of the loop's step for steps over 20 ms, :func:`sample_seconds`),
and the time since the previous sample goes to input when an input frame is on the stack
between the sampled frame and the loop's frame. A sample that reaches the loop's frame with
no input frame on the way keeps the line of the loop it was on: :mod:`_tfres_feed` tells at
exit which of those statements make the step's input (``x, y = next_batch()``) and which are
the loop's own (logging).

Two ways to take the samples:

- **SIGALRM** (where the loop runs on the main thread, as the loops timed here do, and the
  program has no SIGALRM handler or real-time timer of its own): a timer armed for the gap
  only (``setitimer(ITIMER_REAL)``, with ``SA_RESTART`` so that system calls go on) sends the
  signal, and Python runs the handler on the loop's own thread at its next bytecode, with
  the frame it is in. No GIL changes hands, so no convoy can keep a sample out: a random walk
  calling ``rng.integers`` every few microseconds kept the thread below out of most of its
  batches (``unseen38/input_randomwalk_citations`` read 32% input against 72%); in
  ``benchmarks/gap_timer.py`` the thread read 0.82 of such a batch with no sample in 16 of
  21, the timer 1.03, every batch sampled. The timer
  stops at the end of each gap; the handler stays, since a tick sent just before could
  still be on its way (and the default action ends the process: a first version that put
  it back at once was killed by SIGALRM). A program that later takes SIGALRM for itself
  (``signal.alarm``, ``signal.setitimer``, ``signal.signal``) gets the default action back
  first, and the gaps go to the thread.
- **A daemon thread** otherwise, which reads the loop thread's stack
  (``sys._current_frames()``) and so needs the GIL for each sample (below).

A sample is attributed to where the thread is when it lands (a long C call inside the input
counts as input once the sample is taken, after it); the last stretch, from the last sample
to the next call, goes half to where the last sample was (the input ended somewhere in it).

Error of the thread: a sample waits for the GIL, up to the interpreter's switch interval
while the loop's thread runs Python. At the default 5 ms a sample came about every 6 ms, two
in a 12 ms gap, each credited with all the time since the one before: a loop spending 11 ms
a step in its batch read 0, 6, 12 or 18 ms; at 0.5 ms, 9.7-12.7 ms a step. Each edge of a
gap is placed within about a millisecond.

The switch interval is set to 0.1 ms for each gap (``SWITCH_SECONDS``) and the program's
given back at its end, because some Python would not hand the GIL over at 0.5 ms or 5 ms: a
loader class building fraud features kept it through whole 15-28 ms gaps in 13 to 19 of a
window's 20. It calls ``np.zeros`` about every 0.3 ms, and NumPy releases the GIL around
``calloc`` for zeroed arrays of 1 KiB or more. Each release wakes the waiting sampler, the
loop's thread takes the GIL back before it runs, and as the GIL changed hands within the
sampler's timed wait, the wait never asks for a forced switch (CPython's GIL convoy). A
wait of 0.1 ms ends between two such releases: no gap of that loop went unsampled, and
each step read within 0.6 ms of the loader's own clock (``benchmarks/gap_starvation.py``
shows the convoy). Python that releases the GIL more often still could; a gap with no
sample at all is not measured (``GapReading.starved``) rather than read as no input, and the
loop's record says how many there were.

Cost, in the timed gaps only: a signal and a handler call per sample (the random-walk
batch ran 1.04 of its bare time with the timer on, in ``gap_timer.py``), or a GIL hand-over
per sample by the thread.
Python's profile hook, used before the sampler, paid for every Python and C call in the
gap: a generator making 60,000 of them per batch read 3-6 times its own time
(``benchmarks/gap_timer.py``).

A gap that lasts longer than ``limit_seconds`` (the loop ended, and the program went on to
other work) stops the sampling and is not measured.

A loop over a ``tf.data`` pipeline that runs Python (``from_generator``, ``py_function`` and
``numpy_function`` maps) has its input on tf.data's threads, beside the loop's calls:
:class:`PipelinePython` records when that Python runs, so a step that did not wait in
``next()`` but whose call ran beside it can still count the slowdown as input.
"""

import sys
import threading
import time

import _tfres_feed
from _tfres_alarm import ALARM
from _tfres_xplane import overlap

#: inspect.CO_GENERATOR, without importing inspect at start-up
CO_GENERATOR = 0x20
#: methods that hand out the next batch of an iterator class or a sequence (PyDataset, ds[i])
INPUT_METHODS = ("__next__", "__getitem__")

#: the sampler's shortest interval, seconds (a sample also waits for the GIL: up to the
#: interpreter's switch interval while the loop's thread runs Python)
SAMPLE_SECONDS = 0.0005
#: ...longer for long steps: a gap is sampled about this many times per step of the loop
#: (:func:`sample_seconds`), up to :data:`MAX_SAMPLE_SECONDS` apart. Each sample costs the
#: loop's thread a signal and a handler call: a drum-onset batch of Python and NumPy
#: (101 ms) ran 1.11 of its bare time sampled every 0.5 ms (about 55 us for each of its 200
#: samples), 1.05 every 1 ms and 1.04 every 2 ms (``benchmarks/gap_interval.py``, session
#: 52), and a loop of 56 ms steps sampled every hundredth of its step (0.56 ms; 100 a step
#: until session 53) in about 23 of its 55 timed gaps (the window's 20, and one in 10
#: after) paid +2.7% throughput (``unseen64/input_tapeloopmetar_weatherstations``). The
#: input share is read per step: an edge placed within half an interval, step/80, is
#: within 1.25 points of it (input that ends where the gap does reads a quarter of an
#: interval short on average, step/160: the last stretch is halved, ``stop``)
STEP_SAMPLES = 40
MAX_SAMPLE_SECONDS = 0.005
#: the interpreter's switch interval while a gap is sampled, seconds: at the default 5 ms a
#: sample waited about 6 ms for the GIL, and at 0.5 ms a loop releasing the GIL every 0.3 ms
#: kept the sampler out of whole gaps (see the docstring)
SWITCH_SECONDS = 0.0001
#: frames walked up from a sample towards the loop's frame
MAX_DEPTH = 64
#: a gap this long with no sample in it was not measured, rather than measured as no input:
#: the sampler never got the GIL (see the module's docstring). One sample is enough: after a
#: long C call holding the GIL, the first sample takes the whole stretch
STARVED_SECONDS = 0.005


def sample_seconds(step_seconds, per_step=STEP_SAMPLES):
    """The sampler's interval for a gap before a step like one of ``step_seconds``: a
    ``per_step``-th of it (:data:`STEP_SAMPLES`; ``benchmarks/gap_interval.py`` compares
    others), within :data:`SAMPLE_SECONDS` and :data:`MAX_SAMPLE_SECONDS`."""
    return min(MAX_SAMPLE_SECONDS, max(SAMPLE_SECONDS, step_seconds / per_step))


def _is_input(code):
    return code.co_flags & CO_GENERATOR or code.co_name in INPUT_METHODS


class GapSampler:
    """Seconds spent in Python input code between :meth:`start` and :meth:`stop`, from
    samples of the loop thread's stack (see the module's docstring): taken by SIGALRM's
    handler on the loop's own thread where the program leaves SIGALRM alone, else by a
    daemon thread that sleeps on an event between gaps."""

    def __init__(
        self, clock=time.monotonic, every=SAMPLE_SECONDS, switch=SWITCH_SECONDS, alarm=True
    ):
        """``switch``: the switch interval set for each gap sampled by the thread, seconds;
        None leaves the program's (``benchmarks/gap_timer.py`` compares the two).
        ``alarm=False`` samples by the thread even where SIGALRM is free."""
        self._clock = clock
        self._every = every  # the interval when start() is given none
        self._gap_every = every  # this gap's
        self._switch_to = switch
        self._alarm = alarm
        self._lock = threading.Lock()
        self._gap = threading.Event()
        self._thread = None
        self._target = None  # the loop thread's ident
        self._anchors = {}  # id -> frame: the loop's frame and those above it
        self._lines = {}  # (anchor's id, its line, the code it was calling) -> seconds
        self._last_line = None
        self._sampling = False
        self._last = 0.0
        self._inside = False
        self._seconds = 0.0
        self._began = 0.0
        self._samples = 0  # taken in this gap
        self._deadline = float("inf")
        self._switch = None  # the program's switch interval, while ours is set
        #: how the last gap was sampled: "alarm" or "thread"
        self.by = None

    @property
    def on(self):
        return self._sampling

    def start(self, limit_seconds=float("inf"), loop_frame=None, every=None):
        """Start timing the gap on the calling thread; ``loop_frame``: the frame that calls
        the hot function. Samples stop walking at it or at the frames above it (the anchors:
        the loop's frame may be a library's, as Keras's ``train_on_batch``, gone in the gap
        while the user's loop above it goes on). ``every``: this gap's interval, seconds
        (:func:`sample_seconds`); the sampler's own where None."""
        anchors, frame = {}, loop_frame
        while frame is not None and len(anchors) < MAX_DEPTH:
            anchors[id(frame)] = frame
            frame = frame.f_back
        with self._lock:
            if self._sampling:  # a gap never stopped: its timer or switch interval ends here
                self._sampling = False
                self._end_sampling()
            self._seconds, self._inside, self._samples = 0.0, False, 0
            self._lines, self._last_line = {}, None
            self._target = threading.get_ident()
            self._anchors = anchors
            self._last = self._began = self._clock()
            self._deadline = self._last + limit_seconds
            self._gap_every = every or self._every
            self._sampling = True
            if self._alarm and ALARM.arm(self, self._gap_every):
                self.by = "alarm"
                return
            self.by = "thread"
            self._shorten_switch()
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="tfres-input-sampler", daemon=True
            )
            self._thread.start()
        self._gap.set()

    def stop(self, call_frame=None):
        """Stop timing; the gap's :class:`GapReading`, or None when it was not being timed
        (or it outlasted its limit). ``call_frame``: the frame of the call that ends the gap,
        from which the loop's statement making the call is found (see :mod:`_tfres_feed`)."""
        if not self._sampling:  # most calls: no gap timed (only the loop's thread starts one)
            return None
        with self._lock:
            if not self._sampling:
                return None
            self._sampling = False  # first: an alarm due now finds the gap over
            self._end_sampling()
            now = self._clock()
            if self._inside:  # the input ended somewhere after the last sample
                self._seconds += (now - self._last) / 2
            elif self._last_line is not None:
                self._lines[self._last_line] = (
                    self._lines.get(self._last_line, 0.0) + (now - self._last) / 2
                )
            anchors, lines = self._anchors, self._lines
            self._anchors, self._lines, self._last_line = {}, {}, None
            reading = GapReading(self._seconds)
            if not self._samples and now - self._began >= STARVED_SECONDS:
                reading.starved = True
                return reading
        frame, chain = call_frame, set()
        while frame is not None and anchors.get(id(frame)) is not frame:
            chain.add(frame.f_code)
            frame = frame.f_back
        if frame is not None and lines:
            mine = {(line, callee): s for (at, line, callee), s in lines.items() if at == id(frame)}
            reading.loop(frame.f_code.co_filename, frame.f_lineno, chain, mine)
        return reading

    def _end_sampling(self):
        """Stop the sampling of this gap, by whichever means it ran."""
        self._gap.clear()
        ALARM.disarm(self)
        self._restore_switch()

    def _on_alarm(self, frame):
        """A tick of the timer armed for this gap (see :mod:`_tfres_alarm`): ``frame`` is where
        the loop's thread is. No lock: nothing else samples this gap, and :meth:`stop`
        (which the tick may interrupt) ends the gap first."""
        if self._sampling:
            try:
                self._take(frame)
            except Exception:  # raised here, it would surface in the program's own code
                self._sampling = False
                self._end_sampling()

    def _shorten_switch(self):
        """Shorten the interpreter's switch interval for the gap, so that a sample waits about
        0.1 ms for the GIL rather than 5 (the loop's thread hands the GIL over that often
        only while the sampler asks for it, in the timed gaps)."""
        if self._switch is None and self._switch_to is not None:
            current = sys.getswitchinterval()
            if current > self._switch_to:
                self._switch = current
                sys.setswitchinterval(self._switch_to)

    def _restore_switch(self):
        """Give the program its switch interval back, unless it set its own meanwhile."""
        if self._switch is not None:
            if abs(sys.getswitchinterval() - self._switch_to) < 1e-9:
                sys.setswitchinterval(self._switch)
            self._switch = None

    def _run(self):
        while True:
            self._gap.wait()
            time.sleep(self._gap_every)
            self._sample()

    def _sample(self):
        frame = sys._current_frames().get(self._target)
        with self._lock:
            if self._sampling and self.by == "thread":
                self._take(frame)

    def _take(self, frame):
        """One sample: the time since the previous one goes to where ``frame`` (the loop
        thread's innermost) is now."""
        now = self._clock()
        if now > self._deadline:  # not a gap between steps any more
            self._sampling, self._anchors, self._lines = False, {}, {}
            self._end_sampling()
            return
        inside, line, callee, depth = False, None, None, 0
        anchors = self._anchors
        while frame is not None and depth < MAX_DEPTH:
            if anchors.get(id(frame)) is frame:  # the loop's own Python, or above it
                line = (id(frame), frame.f_lineno, callee)
                break
            if _is_input(frame.f_code):
                inside = True
                break
            callee, frame, depth = frame.f_code, frame.f_back, depth + 1
        if inside:
            self._seconds += now - self._last
        elif line is not None:
            self._lines[line] = self._lines.get(line, 0.0) + now - self._last
        self._last, self._inside, self._last_line = now, inside, line
        self._samples += 1


class GapReading:
    """One gap's input: the seconds in generators and ``__next__``/``__getitem__``, and the
    time on each line of the loop's frame, resolved into input by :meth:`seconds` (at exit:
    reading the script's source there keeps it out of the steps). A ``starved`` gap had no
    sample in it (:data:`STARVED_SECONDS`): its input was not measured."""

    __slots__ = ("generator_seconds", "_loop", "starved")

    def __init__(self, generator_seconds):
        self.generator_seconds = generator_seconds
        self._loop = None
        self.starved = False

    def loop(self, filename, call_line, chain, line_seconds):
        """The loop frame's file, the line making the call, the codes of the frames between
        it and the hot function, and {(line, callee code): seconds} (see _tfres_feed)."""
        self._loop = (filename, call_line, frozenset(chain), line_seconds)

    def seconds(self):
        """The gap's input seconds, or None where it was ``starved`` of samples."""
        if self.starved:
            return None
        if self._loop is None:
            return self.generator_seconds
        return self.generator_seconds + _tfres_feed.feeding_seconds(*self._loop)


class PipelinePython:
    """How long ``tf.data``'s Python ran during each call of a loop's function: every
    ``py_func`` TensorFlow makes (the generator of ``from_generator``, ``py_function`` and
    ``numpy_function`` maps) goes through ``script_ops.FuncRegistry.__call__``, which
    :meth:`patch` wraps to keep its spans once :meth:`start` has been called. Calls on the
    loop's own thread are not the pipeline's and are not kept; a ``py_function`` inside the
    loop's own ``tf.function`` runs on TensorFlow's executor threads and is kept (the call
    alone, compared with, runs it too). Spans are let go as calls take them
    (:meth:`take`), so only those since the last call are held. Cost, measured here
    (``benchmarks/pipeline_python.py``): 0.4-0.9 us more per ``py_func`` call, 15-28 us per
    call of the loop's function with 64 spans to take (56-57 us with 256); a loop of 7-13 ms
    steps over a 64-element ``from_generator`` ran at 0.91-1.00 of its bare speed in four
    runs (median 0.95), a spread as wide as the VM's within one run."""

    #: at most this many spans are held (a program whose loop has ended and whose pipeline
    #: runs on, feeding something else, stops adding at this many)
    MAX_SPANS = 50000

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._loop_thread = None
        self._running = {}  # thread ident -> start of the py_func it runs now
        self.spans = []  # (start, end) of finished py_funcs, in the order they ended
        #: the CPU seconds of every finished py_func (its thread's), all threads together
        self.cpu_seconds = 0.0

    @property
    def on(self):
        return self._loop_thread is not None

    def patch(self, script_ops):
        """Wrap ``script_ops.FuncRegistry.__call__`` (TensorFlow's C++ calls it by name)."""
        registry = script_ops.FuncRegistry
        original = registry.__call__
        recorder, clock, running, spans = self, self._clock, self._running, self.spans

        def __call__(self, token, device, args):
            thread = threading.get_ident()
            if recorder._loop_thread in (None, thread):
                return original(self, token, device, args)
            running[thread] = clock()
            cpu = time.thread_time()
            try:
                return original(self, token, device, args)
            finally:
                recorder.cpu_seconds += time.thread_time() - cpu  # under the GIL
                start = running.pop(thread, None)
                if start is not None and len(spans) < recorder.MAX_SPANS:
                    spans.append((start, clock()))

        registry.__call__ = __call__

    def start(self):
        """Keep spans from now on; the calling thread is the loop's."""
        if self._loop_thread is None:
            self._loop_thread = threading.get_ident()

    def take(self, start, end):
        """Seconds of [start, end] (a call) during which the pipeline ran Python, summed over
        its threads (as a Keras step's ``pipeline_seconds``), at most the call's length. Every
        finished span is let go: it ended before the loop's next call can start."""
        spans = self.spans
        if not spans and not self._running:  # a loop over no Python pipeline: every call
            return 0.0
        done = len(spans)
        running = [(s, end) for s in list(self._running.values())]
        total = overlap(spans[:done] + running, start, end)
        del spans[:done]
        return min(total, end - start)


def python_step_input(wait, duration_seconds, bound, share):
    """A step fed from Python: its input timed in the gap, and the loop's ``share``
    (:func:`explained_share`) of what its call ran above the call alone (``bound``, its
    :func:`slowdown_bound`; None where that was not timed): what the input leaves running
    takes cores from the call (NumPy's BLAS threads spin after its last product), and
    TensorFlow's threads sleep while the batch is made. None where the gap was not timed."""
    if bound is None:  # the gap not timed (no wait), or the call alone not timed
        return wait
    return min(duration_seconds, wait + bound[0] * share)


def slowdown_bound(wait, duration_seconds, call_seconds, alone_seconds, beside_seconds, resume):
    """A timed step's (slowdown, bound), seconds: its call's time above the call alone, and
    what the input can explain of it: the CPU seconds the rest of the process ran in the call
    (``beside_seconds``, :func:`_tfres_loopalone.native_beside`) and the input's share of the
    gap of what a call costs more after a gap (:func:`_tfres_loopalone.resume_seconds`). A
    call slowed by other programs runs no more CPU of this process: it gets nothing."""
    gap = duration_seconds - call_seconds
    resumed = resume * min(1.0, wait / gap) if gap > 0 else 0.0
    return max(0.0, call_seconds - alone_seconds), beside_seconds + resumed


def python_bounds(steps, waits, besides, alone_seconds, resume_seconds, python=True):
    """Each step's :func:`slowdown_bound` where fed from Python (``python``, not from tf.data)
    and timed, else None, and the loop's :func:`explained_share` of them. ``steps``: the
    loop's ``(begin, duration, wait, call, from_tf_data, ...)``, ``waits`` resolved."""
    bounds = [
        slowdown_bound(w, s[1], s[3], alone_seconds, b, resume_seconds)
        if python and alone_seconds is not None and not s[4] and w is not None
        else None
        for s, w, b in zip(steps, waits, besides, strict=True)
    ]
    return bounds, explained_share(b for b in bounds if b is not None)


def explained_share(pairs):
    """The share of a loop's slowdowns that their bounds explain, over all its timed steps
    (``pairs``: :func:`slowdown_bound` of each): their sums' ratio, at most 1; 1 where no call
    was slower. Step by step both are noisy readings of one effect; the least of the two (until
    session 65) kept the lower: 8 loops of sets 86-94 run twice read 2.5 points low on average,
    1.7 so; held out (sets 95-96, 8 readings) 1.5 and 1.0 (docs/benchmarks/heldout-sets.md)."""
    slowdown = bound = 0.0
    for s, b in pairs:
        slowdown, bound = slowdown + s, bound + b
    return min(1.0, bound / slowdown) if slowdown > 0 else 1.0
