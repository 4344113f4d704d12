"""`tfres.diagnosis.fit_input`: a Keras fit's input share over all its steps, from its
profiler window's measured one, and the input rule's evidence that says so."""

from __future__ import annotations

from typing import Any

import pytest

import synthetic as S
from tfres.diagnosis.diagnose import diagnose
from tfres.diagnosis.facts import run_facts
from tfres.diagnosis.fit_input import fit_input, profile_alone_seconds


def _step(index: int, seconds: float, wait: float | None = None, **extra: Any) -> dict:
    step = {"kind": "fit", "step": index, "duration_seconds": seconds, **extra}
    if wait is not None:
        step["input_wait_seconds"] = wait
    return step


def _fit(window_wait: float, later: list[float]) -> list[dict]:
    """Steps 0-4 (warm-up, 50 ms), a window 5-24 of 10 ms steps waiting ``window_wait``,
    steps 25-26 (the first stops the profiler: 60 ms), then ``later`` from step 27."""
    steps = [_step(i, 0.05) for i in range(5)]
    steps += [_step(i, 0.010, window_wait) for i in range(5, 25)]
    steps += [_step(25, 0.060), _step(26, 0.060)]
    steps += [_step(27 + i, s) for i, s in enumerate(later)]
    return steps


def test_the_other_steps_time_above_the_windows_non_input_time_is_their_input() -> None:
    # the window: 10 ms steps, 5 ms waiting; 30 later steps of 5 ms (a batch was ready)
    # and 10 of 25 ms (a stall): 20 ms of each stall is input, the ready ones none
    fit = fit_input(_fit(0.005, [0.005] * 30 + [0.025] * 10))
    assert fit is not None
    assert fit.window_fraction == pytest.approx(0.5)
    assert fit.non_input_seconds == pytest.approx(0.005)
    assert (fit.window_steps, fit.extended_steps) == (20, 40)
    # by hand: (20 x 5 ms + 10 x 20 ms) / (20 x 10 ms + 30 x 5 ms + 10 x 25 ms) = 300 / 600
    assert fit.fraction == pytest.approx(0.5)
    assert fit.extended_seconds == pytest.approx(0.4)


def test_a_window_that_waited_little_stands_for_the_fit() -> None:
    # 1.5 ms of 10: a compute-bound fit whose later steps vary (a loaded machine)
    fit = fit_input(_fit(0.0015, [0.030] * 40))
    assert fit is not None and fit.extended_steps == 0
    assert fit.fraction == fit.window_fraction == pytest.approx(0.15)


def test_the_profilers_cost_comes_off_the_window_steps_first() -> None:
    steps = _fit(0.005, [0.010] * 10)
    for s in steps[5:25]:
        s["duration_seconds"], s["profiler_seconds"] = 0.014, 0.004
    fit = fit_input(steps)
    assert fit is not None
    assert fit.non_input_seconds == pytest.approx(0.005)
    # (20 x 5 + 10 x 5) / (20 x 10 + 10 x 10)
    assert fit.fraction == pytest.approx(0.5)


def test_the_other_steps_are_read_against_the_step_alone_where_it_was_measured() -> None:
    # the window's steps read 5 ms of non-input (the profiler's markers among it); the step
    # alone with no profiler, and an unprofiled step's time outside its call, 4 ms: each
    # later 10 ms step waited 6 ms, not 5
    steps = _fit(0.005, [0.010] * 10)
    profile = {"plain_step_alone_seconds": 0.0035, "outside_seconds": 0.0005}
    assert profile_alone_seconds(profile) == pytest.approx(0.004)
    fit = fit_input(steps, profile_alone_seconds(profile))
    assert fit is not None and fit.alone
    assert fit.non_input_seconds == pytest.approx(0.004)
    assert fit.extended_wait_seconds == pytest.approx(10 * 0.006)
    # either figure missing (a step alone not timed, too few steps after the window): the
    # window's median step less its wait, as before
    for missing in ({}, {"plain_step_alone_seconds": 0.0035}, {"outside_seconds": 0.0005}):
        assert profile_alone_seconds(missing) is None
        fit = fit_input(steps, profile_alone_seconds(missing))
        assert fit is not None and not fit.alone
        assert fit.non_input_seconds == pytest.approx(0.005)
    assert profile_alone_seconds(None) is None


def test_only_a_fits_steps_with_a_measured_window_are_read() -> None:
    assert fit_input([_step(i, 0.01) for i in range(50)]) is None
    loop = [dict(_step(i, 0.01, 0.005), kind="loop") for i in range(50)]
    assert fit_input(loop) is None
    # steps measured in another stretch (two fits, each with its window) count as measured,
    # and the 2 after it are not read either
    steps = _fit(0.005, [0.005] * 33) + [_step(i, 0.03, 0.025) for i in range(60, 80)]
    steps += [_step(80, 0.5), _step(81, 0.5), _step(82, 0.005)]
    fit = fit_input(steps)
    assert fit is not None and (fit.window_steps, fit.extended_steps) == (40, 34)


def test_the_rule_says_how_the_fits_share_was_read() -> None:
    r = S.record(samples_=S.samples(60, process_cpu=100.0))
    r.steps = _fit(0.005, [0.005] * 30 + [0.025] * 10)
    for i, s in enumerate(r.steps):
        s["t_seconds"] = 1.0 + 0.01 * i
    assert run_facts(r).input_wait_fraction == pytest.approx(0.5)
    (finding,) = [f for f in diagnose(r) if f.rule == "input_bound"]
    assert finding.title == "Highly input-bound: 50% of each step waits for data"
    assert "the 20 steps of its profiler window waited 50% of theirs (measured)" in (
        finding.evidence
    )
    assert "its 40 other steps ran 200 ms of their 400 ms above" in finding.evidence
