"""The profiler-trace reader (`_tfres_xplane`) on hand-built traces: which time of a step is
input, compute or other. Each trace is one host plane with the lines TensorFlow writes: the
Python thread (step marker, the function's `EagerLocalExecute`), tf.data's threads
(`IteratorGetNext`, the pipeline's `PyFunc`) and an executor thread."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfres.devices.inject import _tfres_xplane as xplane
from xplane_traces import write_trace

pytest.importorskip("tensorflow")


def only_step(path: str) -> dict[str, float]:
    (step,) = xplane.step_breakdown(path)
    shares = ("duration_seconds", "input_seconds", "compute_seconds", "other_seconds")
    return {k: round(step[k] * 1e3, 3) for k in shares}


def test_blocked_in_iterator_get_next_is_input_and_the_rest_of_the_function_compute(
    tmp_path: Path,
) -> None:
    trace = write_trace(
        tmp_path / "t.xplane.pb",
        {
            "python": [("train", 0, 10), ("EagerLocalExecute: __inference_step", 1, 9)],
            "tf_data_iterator_get_next": [("IteratorGetNextOp::DoCompute", 1, 5)],
        },
    )
    assert only_step(trace) == {
        "duration_seconds": 10.0,
        "input_seconds": 4.0,
        "compute_seconds": 4.0,
        "other_seconds": 2.0,
    }


def test_a_wait_outside_the_function_is_input_and_takes_nothing_from_its_compute(
    tmp_path: Path,
) -> None:
    """The batch fetched before the function runs: the parts still add up to the step (its
    compute was once reduced by the wait too, and input + compute + other fell short)."""
    trace = write_trace(
        tmp_path / "t.xplane.pb",
        {
            "python": [("train", 0, 10), ("EagerLocalExecute: __inference_step", 4, 9)],
            "tf_data_iterator_get_next": [("IteratorGetNextOp::DoCompute", 1, 3)],
        },
    )
    assert only_step(trace) == {
        "duration_seconds": 10.0,
        "input_seconds": 2.0,
        "compute_seconds": 5.0,
        "other_seconds": 3.0,
    }


def test_the_pipelines_python_outside_the_function_is_input_too(tmp_path: Path) -> None:
    """A generator's Python (a PyFunc on a tf.data thread) holds the GIL the step's own
    Python needs: the step's time outside its function while it runs is input wait. Inside
    the function (ops run without the GIL) it is not; nor is Python on other threads."""
    trace = write_trace(
        tmp_path / "t.xplane.pb",
        {
            "python": [("train", 0, 20), ("EagerLocalExecute: __inference_step", 6, 16)],
            "tf_data_iterator_get_next": [("IteratorGetNextOp::DoCompute", 6, 10)],
            # 0-4 in the step's Python: input; 12-14 overlaps the function: not input
            "tf_data_private_threadpool/1": [("PyFunc:PyFunc", 0, 4), ("PyFunc:PyFunc", 12, 14)],
            # a user's py_function in the model runs in the executor: never input
            "tf_Compute/1": [("StatefulPartitionedCall/EagerPyFunc:EagerPyFunc", 16, 19)],
        },
    )
    assert only_step(trace) == {
        "duration_seconds": 20.0,
        "input_seconds": 8.0,  # 4 blocked in IteratorGetNext + 4 of the pipeline's Python
        "compute_seconds": 6.0,
        "other_seconds": 6.0,  # 4-6 and 16-20
    }


def test_overlapping_pipeline_python_is_counted_once(tmp_path: Path) -> None:
    trace = write_trace(
        tmp_path / "t.xplane.pb",
        {
            "python": [("train", 0, 10), ("EagerLocalExecute: __inference_step", 8, 10)],
            "tf_data_private_threadpool/1": [("EagerPyFunc:EagerPyFunc", 0, 5)],
            "tf_data_private_threadpool/2": [("PyFuncStateless:PyFuncStateless", 3, 6)],
        },
    )
    step = only_step(trace)
    assert step["input_seconds"] == 6.0 and step["other_seconds"] == 2.0
    assert step["compute_seconds"] == 2.0


def test_a_trace_without_step_markers_has_no_steps(tmp_path: Path) -> None:
    trace = write_trace(
        tmp_path / "t.xplane.pb",
        {"python": [("EagerLocalExecute: __inference_step", 0, 5)]},
    )
    assert xplane.step_breakdown(trace) == []


def test_a_call_marker_in_the_trace_gives_the_running_time(tmp_path: Path) -> None:
    trace = write_trace(
        tmp_path / "t.xplane.pb",
        {
            "python": [
                ("train", 0, 10),
                (xplane.CALL_MARKER, 0.5, 9.5),
                ("EagerLocalExecute: __inference_step", 1, 9),
            ],
            "tf_data_iterator_get_next": [("IteratorGetNextOp::DoCompute", 1, 5)],
        },
    )
    (step,) = xplane.step_breakdown(trace)
    assert step["call_seconds"] == pytest.approx(9e-3)
    assert step["running_seconds"] == pytest.approx(5e-3)  # 9 ms less 4 ms blocked


def test_the_pipelines_work_beside_a_step_is_summed_over_its_threads(tmp_path: Path) -> None:
    """Ops on tf.data's threads (a decode, a py_function) are the pipeline's work; the
    iterators' own spans (``Iterator::...``, ``...Consume``), which mostly wait, are not."""
    trace = write_trace(
        tmp_path / "t.xplane.pb",
        {
            "python": [("train", 0, 10), ("EagerLocalExecute: __inference_step", 0, 10)],
            "tf_data_private_threadpool/1": [
                ("ParallelMapV2/DecodePng:DecodePng", 0, 6),
                ("ReadFile:ReadFile", 5, 7),  # overlaps the decode on the same thread: once
                ("DecodePng:DecodePng", 12, 15),  # after the step
            ],
            "tf_data_private_threadpool/2": [("DecodePng:DecodePng", 2, 5)],
            "tf_data_iterator_resource/1": [("Iterator::Root::Prefetch", 0, 10)],
            "tf_data_iterator_get_next/1": [("PrefetchConsume", 0, 10)],
        },
    )
    (step,) = xplane.step_breakdown(trace)
    assert round(step["pipeline_seconds"] * 1e3, 3) == 10.0  # 0-7 on one thread, 2-5 on another


def test_a_pydataset_workers_batches_are_the_pipelines_python_and_work(tmp_path: Path) -> None:
    """A batch a worker thread makes (the hook's item marker) holds the GIL while the step's
    own Python waits outside its function, and is the pipeline's work beside the step."""
    trace = write_trace(
        tmp_path / "t.xplane.pb",
        {
            "python": [("train", 0, 10), ("EagerLocalExecute: __inference_step", 0, 7)],
            "Thread-3 (worker)": [(xplane.ITEM_MARKER, 0, 9)],
            "Thread-4 (worker)": [(xplane.ITEM_MARKER, 4, 12)],
        },
    )
    (step,) = xplane.step_breakdown(trace)
    assert round(step["gil_seconds"] * 1e3, 3) == 3.0  # 7-10, outside the function
    assert round(step["input_seconds"] * 1e3, 3) == 3.0
    assert round(step["pipeline_seconds"] * 1e3, 3) == 15.0  # 9 + 6 on two threads


@pytest.mark.parametrize(
    ("wait", "alone", "beside", "expected"),
    [
        (0.010, 0.020, 0.0, 0.010 + 0.015),  # waited for tf.data: 15 ms above alone
        (0.010, 0.040, 0.0, 0.010),  # a call no slower than alone lost nothing
        (0.0004, 0.020, 0.0, 0.0004),  # did not wait (under 0.5 ms): nothing added
        # did not wait, but the pipeline's Python ran beside the call (30 of the step's 50 ms)
        (0.0004, 0.020, 0.030, 0.0004 + 0.015),
        # beside it for under a quarter of the step: at most that work (12 of the 15 ms)
        (0.0004, 0.020, 0.012, 0.0004 + 0.012),
        (0.010, None, 0.030, 0.010),  # no call alone timed: the wait as read
        (None, 0.020, 0.0, None),  # nothing timed the input
    ],
)
def test_a_loop_step_that_waited_for_tf_data_counts_its_calls_slowdown_as_input(
    wait: float | None,
    alone: float | None,
    beside: float,
    expected: float | None,
) -> None:
    # a 50 ms step: the wait, the call (35 ms), the loop's own Python
    got = xplane.loop_step_input(wait, 0.050, 0.035, alone, beside)
    assert got == (None if expected is None else pytest.approx(expected))


def test_a_loop_steps_input_is_never_more_than_the_step() -> None:
    assert xplane.loop_step_input(0.040, 0.050, 0.035, 0.001) == 0.050
