"""_tfres_wincost: what the default profiler window has cost so far, read as it runs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tfres.devices.inject import _tfres_wincost
from tfres.devices.inject._tfres_wincost import buffer_bytes, cost_seconds, over_budget

STOP = 1.0 + _tfres_wincost.STOP_PER_TRACED


def test_the_cost_is_the_traced_steps_time_above_the_step_before_with_the_stop() -> None:
    # steps 2-4 lent their batch to the step alone (the capture's cost): step 1 stands
    before = [0.010, 0.044, 0.047, 0.026]
    assert abs(cost_seconds([0.016, 0.017], before) - (0.006 + 0.007) * STOP) < 1e-12
    assert cost_seconds([0.009, 0.010], before) == 0.0  # no slower: nothing to pay


def test_too_few_steps_before_the_window_tell_nothing() -> None:
    assert cost_seconds([0.5] * 8, [0.01, 0.01]) is None
    assert over_budget([0.5] * 8, [0.01, 0.01], 1000, 0.005) is False


def test_the_budget_is_a_share_of_the_fits_unprofiled_time() -> None:
    before = [0.010] * 4
    traced = [0.015] * 8  # 5 ms above each: 40 ms, and the stop's as much again
    spent = 0.040 * STOP
    budget_calls = spent / (0.005 * 0.010)  # the fit whose 0.5% that is
    assert over_budget(traced, before, int(budget_calls) - 1, 0.005)
    assert not over_budget(traced, before, int(budget_calls) + 100, 0.005)
    assert not over_budget(traced, before, None, 0.005)  # a fit of unknown length
    assert not over_budget(traced, before, 1000, None)  # no cap asked


@given(
    traced=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30),
    extra=st.floats(0.0, 1.0),
    before=st.lists(st.floats(0.001, 1.0), min_size=3, max_size=6),
)
def test_a_slower_traced_step_never_costs_less(
    traced: list[float], extra: float, before: list[float]
) -> None:
    slower = [*traced[:-1], traced[-1] + extra]
    assert cost_seconds(slower, before) >= cost_seconds(traced, before) >= 0.0


def test_the_buffer_is_the_windows_growth_less_the_programs_own() -> None:
    mib = 2**20
    rss = [(0, 100 * mib), (1, 200 * mib), (2, 201 * mib), (3, 202 * mib), (4, 203 * mib)]
    rss += [(5, 203 * mib), (6, 224 * mib), (7, 245 * mib)]  # 21 MiB a traced step
    # step 0 -> 1 builds the model: not the program's rate, which is 1 MiB a step
    assert buffer_bytes(rss, 5) == 40 * mib
    assert buffer_bytes(rss[:6], 5) is None  # one traced step's start: no growth yet
    assert buffer_bytes([(5, None), (6, 1)], 5) is None  # not read
