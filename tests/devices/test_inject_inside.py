"""Loops inside one tf.function (`_tfres_inside`): which calls hand a function its data, and
the input read from a profiled call's trace, in both forms AutoGraph gives such a loop."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfres.devices.inject import _tfres_inside as inside
from xplane_traces import write_trace

tf = pytest.importorskip("tensorflow")

SCAN = "ReduceIterator::Root::Prefetch::Scan"


def test_a_function_handed_a_dataset_or_an_iterator_iterates_inside() -> None:
    ds = tf.data.Dataset.range(4).batch(2)
    assert inside.iterates_inside((ds,), {})
    assert inside.iterates_inside((), {"batches": iter(ds)})
    assert inside.iterates_inside((tf.constant(1.0), ds.take(1)), {})
    # a step handed its batch runs one step a call
    assert not inside.iterates_inside((tf.constant([1.0]), 3), {"training": True})
    assert not inside.iterates_inside((), {})


def test_the_window_holds_a_few_steps_at_the_first_calls_pace_within_its_bounds() -> None:
    ds = tf.data.Dataset.range(1000).batch(10)  # 100 batches, a length it can tell
    # a first call of 30 s (tracing and 100 steps): 5 steps at 0.3 s each, from call 2
    assert inside.window_seconds([30.0], (ds,), {}) == pytest.approx(1.5)
    assert inside.window_seconds([2.0], (ds,), {}) == inside.WINDOW_SECONDS  # 0.1 s: the least
    assert inside.window_seconds([600.0], (), {"d": ds}) == inside.MAX_WINDOW_SECONDS
    # no length to go by: an iterator, from call 2
    assert inside.window_seconds([30.0], (iter(ds),), {}) == inside.WINDOW_SECONDS


def test_a_dataset_of_unknown_length_gets_a_third_of_the_second_call_from_the_third() -> None:
    gen = tf.data.Dataset.from_generator(lambda: iter([1.0]), output_types=tf.float32)
    assert inside.window_seconds([3.4], (gen,), {}) is None  # the first call traces: wait
    assert inside.window_seconds([3.4, 2.5], (gen,), {}) == pytest.approx(2.5 / 3)
    assert inside.window_seconds([3.4, 0.6], (gen,), {}) == inside.WINDOW_SECONDS
    assert inside.window_seconds([30.0, 20.0], (gen,), {}) == inside.MAX_WINDOW_SECONDS


def test_autographs_scan_reads_are_the_events_right_beneath_its_first_scan(
    tmp_path: Path,
) -> None:
    """``for x, y in dataset`` in a tf.function: the body is a ``scan`` reduced over the
    dataset; its read of the dataset beneath it is the input, each 10 ms step reading 4 ms.
    The pipeline's own work beneath that read, and a user's ``scan`` inside their
    pipeline, are not reads of the loop."""
    events = []
    for i in range(5):
        t = 10 * i
        events += [
            (SCAN, t, t + 10),
            (SCAN + "::FiniteTake", t, t + 4),
            (SCAN + "::FiniteTake::MapAndBatch", t, t + 4),
            (SCAN + "::FiniteTake::Scan::Map", t, t + 3),
        ]
    trace = write_trace(tmp_path / "t.xplane.pb", {"tf_data_prefetch": events})
    reading = inside.reads_input(trace)
    assert reading is not None
    assert reading["steps"] == 4  # the whole steps between the first read and the last
    assert reading["duration_seconds"] == pytest.approx(0.040)
    assert reading["input_seconds"] == pytest.approx(0.016)


def test_a_graph_loops_iterator_get_next_ops_are_its_reads(tmp_path: Path) -> None:
    """``next(iterator)`` under ``tf.range`` in a tf.function: each step's read is the
    ``IteratorGetNext`` op; a read that outlasts the next one's start counts up to it."""
    reads = [
        ("IteratorGetNextOp::DoCompute", s, e) for s, e in [(0, 6), (8, 9), (12, 20), (20, 21)]
    ]
    trace = write_trace(tmp_path / "t.xplane.pb", {"tf_data_iterator_get_next": reads})
    reading = inside.reads_input(trace)
    assert reading == pytest.approx({"steps": 3, "duration_seconds": 0.020, "input_seconds": 0.015})


def test_under_three_reads_is_no_reading(tmp_path: Path) -> None:
    trace = write_trace(
        tmp_path / "t.xplane.pb",
        {
            "tf_data": [
                ("IteratorGetNextOp::DoCompute", 0, 5),
                ("IteratorGetNextOp::DoCompute", 9, 10),
            ]
        },
    )
    assert inside.reads_input(trace) is None


def test_a_window_whose_profiler_cannot_start_has_no_reading_and_raises_nothing() -> None:
    """The user's own profiler session holds it: the call runs on, unprofiled."""
    profiler = tf.profiler.experimental
    profiler.start(str(Path(__file__).parent))  # any folder: the session is not saved
    try:
        window = inside.CallWindow(seconds=0.05)
        window.begin()
        window.stop()
        assert window.error is not None
        assert window.reading() is None
        assert not window.holds(0.0, 1e9)
    finally:
        profiler.stop(save=False)


def test_a_trace_that_cannot_be_read_leaves_an_error_not_an_exception(tmp_path: Path) -> None:
    """A trace cut short (the program killed while it was written): the loop's steps are
    still written, with a note, by the caller."""
    window = inside.CallWindow(seconds=0.01)
    window.logdir = str(tmp_path)
    cut = tmp_path / "plugins" / "profile" / "run" / "host.xplane.pb"
    cut.parent.mkdir(parents=True)
    cut.write_bytes(b"\x0a\xff\xff\xff")  # a field that claims more bytes than follow
    assert window.reading() is None
    assert window.error is not None
    assert not tmp_path.exists()  # the trace is removed either way


def test_the_window_holds_the_calls_that_ran_while_the_timer_let_it_run() -> None:
    ticks = iter([10.0, 12.0])  # started, stopped: the hook's clock
    window = inside.CallWindow(seconds=0.01, clock=lambda: next(ticks))
    window.begin()
    window.stop()
    assert window.error is None and window.reading() is None  # nothing read in the loop
    assert not window.holds(8.0, 9.9)  # the call before it
    assert window.holds(9.9, 11.0) and window.holds(11.5, 13.0)
    assert not window.holds(12.0, 13.0)  # began once it had stopped


def test_a_calls_input_is_what_it_ran_above_the_call_alone_when_its_pipeline_worked() -> None:
    # a 2.0 s call (2.1 s with the loop's Python around it) whose function alone takes 1.2 s
    # waited in its reads (the window's share: 0.3 s) or found its batches ready while the
    # pipeline worked beside it (1.5 s of it): either way it lost 0.8 s to its input
    assert inside.call_input(0.3, 2.1, 2.0, 1.2, 0.0) == pytest.approx(0.8)
    assert inside.call_input(None, 2.1, 2.0, 1.2, 1.5) == pytest.approx(0.8)
    # the wait read in the window is more than the call ran above alone: the wait stands
    assert inside.call_input(1.0, 2.1, 2.0, 1.2, 1.5) == pytest.approx(1.0)
    # no wait and little pipeline beside it (0.2 s, under a quarter of the call): it lost at
    # most that work; whatever else slowed it (other programs) is not its input
    assert inside.call_input(0.0, 2.1, 2.0, 1.2, 0.2) == pytest.approx(0.2)
    assert inside.call_input(None, 2.1, 2.0, 1.2, 0.2) == pytest.approx(0.2)
    assert inside.call_input(0.0, 2.1, 2.0, 1.2, 0.0) == 0.0
    assert inside.call_input(None, 2.1, 2.0, 1.2, 0.0) is None
    # the call alone not timed: the window's share as read, or nothing
    assert inside.call_input(0.3, 2.1, 2.0, None, 1.5) == 0.3
    assert inside.call_input(None, 2.1, 2.0, None, 1.5) is None
    # faster than alone: nothing above it
    assert inside.call_input(None, 2.1, 1.0, 1.2, 1.5) == 0.0
