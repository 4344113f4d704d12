"""A custom loop's steps as the child's hook writes them (`_tfres_loops.write_steps`): what a
step's call ran above the function alone is input when the pipeline worked beside the call."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tfres.devices.child_env import INJECT_DIR

sys.path.insert(0, str(INJECT_DIR))
import _tfres_instrument as core  # noqa: E402
import _tfres_loops as loops  # noqa: E402
import _tfres_tob  # noqa: E402
import _tfres_xplane  # noqa: E402, F401  (write_steps imports it by name)

sys.path.remove(str(INJECT_DIR))


def _write(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    steps: list[tuple],
    *,
    eager: bool = False,
    reads_input: bool = False,
    reads: int = 0,
    after_gap: list[float] | None = None,
    keras: tuple[list[float], list[float]] | None = None,
) -> list[float]:
    out = tmp_path / "steps.jsonl"
    env = {core.STEPS_ENV: str(out), core.EVENTS_ENV: str(tmp_path / "events.jsonl")}
    inst = core.Instrument(env)
    monkeypatch.setattr(core, "INSTRUMENT", inst)
    stats = loops._LoopStats("train_step", None)
    stats.calls = core.HOT_CALLS
    stats.steps = [(*step, reads) for step in steps]  # and each step's next() calls
    stats.eager = eager
    stats.first_start, stats.last_end = steps[0][0], steps[-1][0] + steps[-1][1]
    # the function alone at exit: 30 ms a call, 35 ms of the process's CPU in it
    stats.alone = SimpleNamespace(
        times=[0.030, 0.030, 0.030],
        cpu_seconds=0.035,
        reads_input=reads_input,
        after_gap_times=after_gap or [],  # calls alone each after an idle gap
        keras_times=keras[1] if keras else None,  # train_on_batch's Python alone
    )
    if keras:  # train_on_batch's Python in each of the loop's calls
        monkeypatch.setattr(_tfres_tob, "RUNS", {id(stats): list(enumerate(keras[0]))})
    inst.loops = {1: stats}
    loops.write_steps()
    return [json.loads(line).get("input_wait_seconds") for line in out.read_text().splitlines()]


def test_a_step_that_found_its_batch_ready_counts_the_native_work_beside_its_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 50 ms steps over tf.data: next() found a batch ready (0.3 ms); each call ran 40 ms.
    # (begin, step, wait, call, from tf.data, the pipeline's Python beside, the process's CPU)
    steps = [
        (0.00, 0.050, 0.0003, 0.040, True, 0.0, 0.055),  # 20 ms of CPU beside: 40% of it
        (0.05, 0.050, 0.0003, 0.040, True, 0.0, 0.045),  # 10 ms beside: under a quarter
        (0.10, 0.050, 0.0003, 0.040, True, 0.0, 0.039),  # 4 ms beside, under a quarter too
        (0.15, 0.050, 0.0003, 0.040, True, 0.015, 0.035),  # the pipeline's Python, 15 ms
        (0.20, 0.050, 0.0003, 0.040, True, 0.0, 0.030),  # less CPU than alone: none beside
    ]
    waits = _write(tmp_path, monkeypatch, steps)
    # counted: the wait, and the call's 10 ms above the function alone; under a quarter of
    # the step, at most the work beside the call (all 10 ms, then 4 of them)
    assert waits == pytest.approx([0.0103, 0.0103, 0.0043, 0.0103, 0.0003])


def test_only_the_time_above_a_ready_next_is_a_tf_data_steps_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 10 ms steps whose calls ran as alone (30 ms a call alone: none above it), two reads
    # each; next() with its element ready takes 0.4 ms (timed at exit)
    monkeypatch.setattr(loops, "_FLOOR", [0.0004])
    steps = [
        (0.00, 0.010, 0.0008, 0.009, True, 0.0, 0.0),  # two ready reads: no wait
        (0.01, 0.010, 0.0050, 0.005, True, 0.0, 0.0),  # 4.2 ms above them
        (0.02, 0.010, 0.0006, 0.009, True, 0.0, 0.0),  # faster than the floor: 0, not less
    ]
    waits = _write(tmp_path, monkeypatch, steps, reads=2)
    assert waits == pytest.approx([0.0, 0.0042, 0.0])
    monkeypatch.setattr(loops, "_FLOOR", [None])  # not timed: the reads count whole
    (tmp_path / "whole").mkdir()
    waits = _write(tmp_path / "whole", monkeypatch, steps, reads=2)
    assert waits == pytest.approx([0.0008, 0.005, 0.0006])


def test_a_function_that_reads_its_iterator_in_its_graph_counts_its_call_above_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # next(iterator) inside the function: no next() in Python, nothing timed before a call
    # (None) or a stray 0; the pipeline's Python ran beside each 40 ms call, or did not
    steps = [
        (0.00, 0.050, None, 0.040, False, 0.020, 0.030),
        (0.05, 0.050, 0.0, 0.040, False, 0.020, 0.030),
        (0.10, 0.050, None, 0.040, False, 0.0, 0.030),  # nothing beside it: no input
    ]
    waits = _write(tmp_path, monkeypatch, steps, reads_input=True)
    assert waits == pytest.approx([0.010, 0.010, 0.0])
    # the same calls of a function that reads no tf.data: nothing timed, nothing counted
    (tmp_path / "plain").mkdir()
    assert _write(tmp_path / "plain", monkeypatch, steps)[::2] == [None, None]


def test_a_loop_over_python_input_counts_its_calls_slowdown_up_to_the_cpu_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Python input runs between the calls, but leaves NumPy's BLAS threads spinning into the
    # next call (unseen26/input_trainonbatch_birdcalls): 40 ms calls of a 30 ms function
    # (35 ms of CPU alone), the process running 25 ms more CPU in them: 10 ms is input
    steps = [(0.0, 0.050, 0.010, 0.040, False, 0.0, 0.060)] * 3
    assert _write(tmp_path, monkeypatch, steps) == pytest.approx([0.020] * 3)
    # ...at most the CPU beside the calls, summed over the loop (4 of 20 ms): a call slowed
    # with no more CPU of this process (other programs took its cores) gets nothing
    steps = [
        (0.0, 0.050, 0.010, 0.040, False, 0.0, 0.039),  # 4 ms beside
        (0.0, 0.050, 0.010, 0.040, False, 0.0, 0.030),  # none
        (0.0, 0.050, None, 0.040, False, 0.0, 0.060),  # outside the window: not timed
    ]
    (tmp_path / "bounded").mkdir()
    waits = _write(tmp_path / "bounded", monkeypatch, steps)
    assert waits == [pytest.approx(0.012), pytest.approx(0.012), None]  # a fifth of each


def test_a_loop_over_python_input_bounds_its_calls_slowdown_over_the_loop_not_step_by_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # step by step the CPU beside a call is a noisy reading of what slowed it: 4 ms here, 0
    # there, for two calls 10 ms slower than alone, and 25 ms beside a call no slower. Over
    # the loop, 29 ms beside explain the 20 ms: both slowdowns are input, the third step's
    # call adds none (the least step by step read 4, 0 and 0 ms)
    steps = [
        (0.0, 0.050, 0.010, 0.040, False, 0.0, 0.039),
        (0.0, 0.050, 0.010, 0.040, False, 0.0, 0.030),
        (0.0, 0.050, 0.010, 0.030, False, 0.0, 0.060),
    ]
    waits = _write(tmp_path, monkeypatch, steps)
    assert waits == [pytest.approx(0.020), pytest.approx(0.020), pytest.approx(0.010)]


def test_a_train_on_batch_loops_input_gains_keras_python_above_its_level_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 50 ms steps of 30 ms calls (as alone), 10 ms of Python input timed in the window's
    # gaps (steps 5 and 6); train_on_batch's own Python took 1.2 ms a step in the steps not
    # sampled from the window on (7 and 8), 0.5 ms back to back at exit: 0.7 ms is input
    timed = (0.0, 0.050, 0.010, 0.030, False, 0.0, 0.035)
    plain = (0.0, 0.050, None, 0.030, False, 0.0, 0.035)
    steps = [plain] * 5 + [timed] * 2 + [plain] * 2
    keras_python = [0.004] * 5 + [0.003, 0.003, 0.0011, 0.0013]  # sampled: not read
    waits = _write(tmp_path, monkeypatch, steps, keras=(keras_python, [0.0005, 0.0006, 0.0004]))
    assert waits == [None] * 5 + [pytest.approx(0.0107)] * 2 + [None] * 2
    # no train_on_batch timed at exit: the wait as timed
    (tmp_path / "untimed").mkdir()
    waits = _write(tmp_path / "untimed", monkeypatch, steps, keras=(keras_python, []))
    assert waits[5:7] == [pytest.approx(0.010)] * 2


def test_an_eager_steps_input_is_its_wait_and_the_pipelines_python_since_the_last_step() -> None:
    assert loops.eager_step_input(0.004, 0.050, 0.020) == pytest.approx(0.024)
    assert loops.eager_step_input(0.004, 0.050, 0.090) == 0.050  # never more than the step
    assert loops.eager_step_input(None, 0.050, 0.020) is None  # no tf.data read: not timed


def test_an_eager_loops_steps_count_the_pipelines_python_beside_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (begin, step, wait, call, from tf.data, tf.data's Python CPU since the last step, CPU)
    steps = [(0.05 * i, 0.050, 0.002, 0.001, True, 0.018, 0.0) for i in range(5)]
    # the function alone plays no part: there is no function to time alone
    assert _write(tmp_path, monkeypatch, steps, eager=True) == pytest.approx([0.020] * 5)


def test_a_loop_over_python_input_counts_the_calls_cost_of_resuming_after_its_gap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the function alone: 30 ms back to back, 34 ms after an idle gap as long as the loop's
    # (TensorFlow's threads asleep): 4 ms of a slower call is the gap's, with no CPU beside.
    # 50 ms steps: a 36 ms call (35 ms of CPU, as alone), 14 ms of gap, 10.5 ms of it input
    steps = [(0.0, 0.050, 0.0105, 0.036, False, 0.0, 0.035)] * 2
    # the input's share of the gap (3/4) of the 4 ms: 3 ms more input
    waits = _write(tmp_path, monkeypatch, steps, after_gap=[0.034, 0.034, 0.034])
    assert waits == pytest.approx([0.0135] * 2)
    # never more than the call ran above alone (6 ms), and nothing with no call after a gap
    (tmp_path / "capped").mkdir()
    waits = _write(tmp_path / "capped", monkeypatch, steps, after_gap=[0.060, 0.060, 0.060])
    assert waits == pytest.approx([0.0165] * 2)
    (tmp_path / "none").mkdir()
    assert _write(tmp_path / "none", monkeypatch, steps) == pytest.approx([0.0105] * 2)
