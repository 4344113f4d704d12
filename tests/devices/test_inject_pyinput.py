"""The gap sampler of custom loops fed from Python (`_tfres_pyinput`, loaded in the child
without tfres): generator resumptions, iterator `__next__` and `ds[i]` are input; the loop's
own Python is not; nested generators count once; a gap past its limit is not measured; the
sampling thread rests between gaps and leaves a program's own profiler alone. And the record
of tf.data's Python calls (`PipelinePython`), with real TensorFlow: a `from_generator`'s
Python on tf.data's threads is kept, the loop thread's own `py_function` is not."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from tfres.devices.child_env import INJECT_DIR

sys.path.insert(0, str(INJECT_DIR))
from _tfres_pyinput import (  # noqa: E402
    GapReading,
    GapSampler,
    PipelinePython,
    explained_share,
    python_bounds,
    sample_seconds,
)

sys.path.remove(str(INJECT_DIR))


def _batches(seconds: float) -> Iterator[int]:
    i = 0
    while True:
        time.sleep(seconds)
        yield i
        i += 1


def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _busy_batches(seconds: float) -> Iterator[int]:
    while True:
        _busy(seconds)  # Python work holding the GIL: samples wait for the switch interval
        yield 0


def _bookkeeping(seconds: float) -> None:
    time.sleep(seconds)  # the loop's own Python (logging, metrics): not input


def _reads_within(measure: Callable[[], GapReading | None], low: float, high: float) -> None:
    """One of three readings of ``measure`` in [low, high). A sampler starved of the CPU
    (other programs busy on every core) sees its edges late, once; one that counts the wrong
    Python reads out of bounds every time."""
    readings: list[float | None] = []
    for _ in range(3):
        reading = measure()
        readings.append(None if reading is None else reading.seconds())
        if readings[-1] is not None and low <= readings[-1] < high:
            return
    raise AssertionError(f"no reading in [{low}, {high}): {readings}")


def _reads_its_own_time(
    measure: Callable[[], tuple[GapReading | None, float]],
    low: float,
    high: float,
    slack: float = 0.0,
) -> None:
    """One of three readings of ``measure`` in [low * t, high * t + slack), t the time of
    the same call, timed around it (``measure`` returns both). A gap the sampler never got
    into (a loaded machine) reads None: a miss, as in :func:`_reads_within`."""
    readings: list[tuple[float | None, float]] = []
    for _ in range(3):
        reading, took = measure()
        seconds = None if reading is None else reading.seconds()
        readings.append((seconds, took))
        if seconds is not None and low * took <= seconds < high * took + slack:
            return
    raise AssertionError(f"no (reading, own time) in [{low}t, {high}t + {slack}): {readings}")


@pytest.mark.parametrize("make", [_batches, _busy_batches], ids=["sleeping", "computing"])
def test_a_generator_resumption_is_input_and_the_loops_own_python_is_not(make) -> None:  # noqa: ANN001
    def measure() -> GapReading | None:
        batches, timer = make(0.03), GapSampler()
        timer.start(loop_frame=sys._getframe())
        next(batches)
        _bookkeeping(0.05)
        _busy(0.02)
        return timer.stop()

    # each edge of the input within a switch interval (5 ms) of where it is
    _reads_within(measure, 0.022, 0.040)


def test_a_generator_reading_another_counts_once() -> None:
    def outer() -> Iterator[int]:
        inner = _batches(0.02)
        while True:
            time.sleep(0.01)
            yield next(inner)

    def measure() -> GapReading | None:
        timer, gen = GapSampler(), outer()
        timer.start(loop_frame=sys._getframe())
        next(gen)
        return timer.stop()

    _reads_within(measure, 0.024, 0.040)


class _Dataset:
    def __len__(self) -> int:
        return 10

    def __getitem__(self, i: int) -> int:
        time.sleep(0.02)
        return i


class _Reader:
    def __iter__(self) -> _Reader:
        return self

    def __next__(self) -> int:
        time.sleep(0.02)
        return 1


@pytest.mark.parametrize("read", [lambda: _Dataset()[3], lambda: next(_Reader())])
def test_getitem_and_next_methods_are_input(read) -> None:  # noqa: ANN001
    def measure() -> GapReading | None:
        timer = GapSampler()
        timer.start(loop_frame=sys._getframe())
        read()
        _bookkeeping(0.02)
        return timer.stop()

    _reads_within(measure, 0.015, 0.030)


def _make_batch(seconds: float) -> int:
    time.sleep(seconds)  # a plain function: no generator or __getitem__ marks it
    return 1


def test_a_plain_function_assigning_what_the_call_reads_is_input() -> None:
    def measure() -> GapReading | None:
        timer = GapSampler()

        def hot(x: int) -> GapReading | None:  # the hot function: its frame ends the gap
            return timer.stop(sys._getframe())

        timer.start(loop_frame=sys._getframe())
        x = _make_batch(0.03)  # input: the call reads x
        log = _make_batch(0.02)  # the loop's own Python: the call does not read it
        assert log
        return hot(x)

    _reads_within(measure, 0.027, 0.040)


def test_the_loops_frame_is_found_above_a_library_frame_gone_in_the_gap() -> None:
    timer = GapSampler()

    def library_call(x: int, first: bool) -> GapReading | None:  # as Keras's train_on_batch
        if first:
            timer.start(loop_frame=sys._getframe())  # the call's caller: gone in the gap
            return None
        time.sleep(0.02)  # the library preparing its call: the step's cost, not input
        return timer.stop(sys._getframe())

    def measure() -> GapReading | None:
        library_call(0, True)
        xs = []
        for _ in range(3):
            xs.append(_make_batch(0.01))  # fills xs, which the call reads
        _make_batch(0.02)  # bookkeeping
        return library_call(len(xs), False)

    _reads_within(measure, 0.027, 0.040)


def test_stopped_inside_the_input_counts_up_to_the_stop() -> None:
    timer = GapSampler()

    def reader() -> Iterator[GapReading | None]:
        time.sleep(0.02)
        yield timer.stop()  # the hot function is called from inside the generator

    def measure() -> tuple[GapReading | None, float]:
        # the gap begins inside start(), before the timer is armed: the own time spans it too
        # (timed from after start(), a CI run read three 20 ms sleeps 0.02-0.31 ms over it:
        # their samples, every 0.5 ms, ended with the sleep, leaving no last stretch to halve)
        start = time.perf_counter()
        timer.start(loop_frame=sys._getframe())
        reading = next(reader())
        took = time.perf_counter() - start  # the whole gap, in the generator
        assert reading is not None and not timer.on
        return reading, took

    _reads_its_own_time(measure, 0.5, 1.0)


def test_the_sampler_rests_between_gaps_and_leaves_a_profiler_alone() -> None:
    def theirs(frame, event, arg):  # noqa: ANN001, ANN202
        return None

    sys.setprofile(theirs)
    try:
        timer = GapSampler()
        timer.start(loop_frame=sys._getframe())
        next(_batches(0.01))
        assert timer.stop() is not None
        assert sys.getprofile() is theirs
    finally:
        sys.setprofile(None)
    samplers = [t for t in threading.enumerate() if t.name == "tfres-input-sampler"]
    assert samplers and all(t.daemon for t in samplers)  # never holds the program's exit
    before = time.process_time()
    time.sleep(0.1)  # between gaps: the thread waits on its event, nothing is sampled
    assert not timer.on and timer.stop() is None
    assert time.process_time() - before < 0.01


def test_a_gap_past_its_limit_is_not_measured() -> None:
    before = sys.getswitchinterval()
    timer = GapSampler()
    timer.start(limit_seconds=0.01, loop_frame=sys._getframe())
    _bookkeeping(0.03)  # a sample past the deadline stops the sampling
    assert not timer.on
    assert timer.stop() is None
    assert sys.getswitchinterval() == before


def test_a_short_gap_is_sampled_finely_and_the_switch_interval_is_given_back() -> None:
    """10 ms of input, then 10 ms of the loop's own Python, both holding the GIL: at the
    interpreter's default switch interval (5 ms) a sample waited about 6 ms, and such a gap
    read 0, 6, 12 or 18 ms of input."""
    before = sys.getswitchinterval()
    timer = GapSampler()
    during: list[float] = []

    def measure() -> GapReading | None:
        timer.start(loop_frame=sys._getframe())
        during.append(sys.getswitchinterval())
        next(_busy_batches(0.010))
        _busy(0.010)
        return timer.stop()

    _reads_within(measure, 0.007, 0.013)
    assert max(during) < before
    assert sys.getswitchinterval() == before


def test_the_interval_is_a_fortieth_of_the_step_within_half_a_ms_and_5_ms() -> None:
    assert sample_seconds(0.010) == 0.0005  # short steps: as finely as before
    assert sample_seconds(0.056) == pytest.approx(0.0014)  # 0.56 ms until session 53
    assert sample_seconds(0.100) == pytest.approx(0.0025)
    assert sample_seconds(30.0) == 0.005


def test_a_gap_is_sampled_at_the_interval_it_is_given() -> None:
    """By the thread here (pytest-timeout holds SIGALRM): 40 ms of input sampled every
    4 ms takes about ten samples, not eighty, and still reads the 40 ms."""
    timer = GapSampler()
    counts: list[int] = []

    def measure() -> GapReading | None:
        timer.start(loop_frame=sys._getframe(), every=0.004)
        next(_batches(0.040))
        reading = timer.stop()
        counts.append(timer._samples)
        return reading

    _reads_within(measure, 0.034, 0.046)
    assert min(counts) <= 12


def test_a_switch_interval_the_program_sets_in_a_gap_is_kept() -> None:
    before = sys.getswitchinterval()
    try:
        timer = GapSampler()
        timer.start(loop_frame=sys._getframe())
        sys.setswitchinterval(0.002)
        timer.stop()
        assert sys.getswitchinterval() == pytest.approx(0.002)
    finally:
        sys.setswitchinterval(before)


def test_pipeline_python_keeps_tf_datas_python_calls_and_not_the_loops_own() -> None:
    tf = pytest.importorskip("tensorflow")
    from tensorflow.python.ops import script_ops

    def examples() -> Iterator[float]:
        while True:
            _busy(0.004)  # Python on tf.data's thread, holding the GIL
            yield 1.0

    spec = tf.TensorSpec((), tf.float32)
    data = tf.data.Dataset.from_generator(examples, output_signature=spec).batch(5)
    recorder, original = PipelinePython(time.perf_counter), script_ops.FuncRegistry.__call__
    recorder.patch(script_ops)
    try:
        next(iter(data))  # not started: nothing kept
        assert recorder.spans == [] and not recorder.on
        recorder.start()
        own = tf.py_function(lambda: _busy(0.02) or 0.0, [], tf.float32)  # the loop's thread
        assert float(own) == 0.0 and recorder.spans == []
        batches = iter(data)
        start = time.perf_counter()
        for _ in range(4):
            next(batches)
        end = time.perf_counter()
        kept = len(recorder.spans)
        # 4 batches of 5 examples of 4 ms each, made on tf.data's thread while next() waited
        seconds = recorder.take(start, end)
        assert 0.8 * 0.080 <= seconds <= end - start, seconds
        assert kept >= 15
        assert all(e > end for _, e in recorder.spans)  # those that ended by then let go
        # tf.data may go on making examples on its thread (an injected prefetch): a call in
        # flight counts over any later window, so the iterator goes first
        del batches
        time.sleep(0.05)  # a call in flight (4 ms) ends
        later = time.perf_counter()
        recorder.take(start, later)  # lets go of those that ended
        assert recorder.take(later, later + 1) == 0.0
    finally:
        script_ops.FuncRegistry.__call__ = original


def test_pipeline_python_sums_its_threads_within_the_call_and_lets_go_of_finished_spans() -> None:
    recorder = PipelinePython(time.perf_counter)
    recorder.spans.extend([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)])
    recorder._running[1] = 9.5  # a py_func still running at the call's end
    # 0.5 + 1.5 (two threads, 1.5-3) + 1.0 + 0.5 (running since 9.5)
    assert recorder.take(1.5, 10.0) == pytest.approx(3.5)
    assert recorder.spans == []
    recorder.spans.extend([(10.0, 11.0), (10.0, 11.0), (10.0, 11.0)])  # three threads at once
    assert recorder.take(10.0, 11.0) == pytest.approx(1.0)  # never more than the call


def test_a_gap_the_sampler_never_reached_is_not_measured() -> None:
    """A loop whose Python kept the GIL through the gap (seen on a loader class: the sampler
    woke only once the hot function released it) is not read as having no input."""
    timer = GapSampler(every=0.05)  # no sample can land in the next 20 ms
    timer.start(loop_frame=sys._getframe())
    next(_busy_batches(0.020))
    reading = timer.stop()
    assert reading is not None and reading.starved
    assert reading.seconds() is None


def test_a_short_gap_without_a_sample_still_reads_no_input() -> None:
    def measure() -> GapReading | None:
        timer = GapSampler(every=0.05)
        timer.start(loop_frame=sys._getframe())
        _busy(0.001)  # the loop's own Python, shorter than a starved stretch
        return timer.stop()

    # a gap stretched past 5 ms by other programs on every core is starved: one of three
    _reads_within(measure, 0.0, 1e-9)


def test_a_long_c_call_holding_the_gil_then_python_is_read_whole() -> None:
    """A batch made by one C call that keeps the GIL (``sum`` over a range here; a big
    ``pickle.loads`` in a user's loader), then a little Python: the first sample, as the
    call returns, takes the whole stretch."""
    n = 1
    while True:  # about 20 ms of one C call on this machine
        start = time.perf_counter()
        sum(range(n))
        if time.perf_counter() - start >= 0.02:
            break
        n *= 2

    def batches() -> Iterator[int]:
        while True:
            total = sum(range(n))
            _busy(0.004)
            yield total

    gen, timer = batches(), GapSampler()

    def measure() -> tuple[GapReading | None, float]:
        timer.start(loop_frame=sys._getframe())
        start = time.perf_counter()
        next(gen)
        took = time.perf_counter() - start  # the batch's own time
        return timer.stop(), took

    _reads_its_own_time(measure, 0.5, 1.5, slack=0.005)


def test_the_loops_bounds_explain_its_slowdowns_summed_over_its_steps() -> None:
    # (slowdown, bound): 20 ms slower in all, 4 ms explained: a fifth of each step's slowdown
    assert explained_share([(0.010, 0.004), (0.010, 0.0)]) == pytest.approx(0.2)
    assert explained_share([(0.010, 0.004), (0.0, 0.025)]) == 1.0  # never above all
    assert explained_share([(0.0, 0.004)]) == 1.0  # no call slower: nothing to share
    assert explained_share([]) == 1.0


def test_only_the_steps_fed_from_python_with_a_timed_gap_are_bounded() -> None:
    # (begin, duration, wait, call, from tf.data): 50 ms steps, 40 ms calls of a 30 ms function
    steps = [(0.0, 0.050, None, 0.040, False), (0.0, 0.050, None, 0.040, True)] * 2
    waits, besides = [0.010, 0.001, None, 0.001], [0.004] * 4
    bounds, share = python_bounds(steps, waits, besides, 0.030, 0.0)
    assert bounds == [(pytest.approx(0.010), pytest.approx(0.004)), None, None, None]
    assert share == pytest.approx(0.4)
    # the call alone not timed, or not a loop fed from Python: none, and all of nothing
    assert python_bounds(steps, waits, besides, None, 0.0) == ([None] * 4, 1.0)
    assert python_bounds(steps, waits, besides, 0.030, 0.0, False) == ([None] * 4, 1.0)
