"""`tfres.watch.profile.breakdown_line`: what the report says of a profile window."""

from __future__ import annotations

from tfres.watch.profile import breakdown_line


def _profile(**summary: float) -> dict:
    steps = [{"step": 5}, {"step": 24}]
    return {"summary": {"steps": 20, "duration_seconds": 0.2, **summary}, "steps": steps}


def test_the_line_gives_the_shares_and_the_pipeline_slowing_the_step() -> None:
    line = breakdown_line(
        _profile(
            input_seconds=0.16, compute_seconds=0.03, other_seconds=0.01, contention_seconds=0.04
        )
    )
    assert line is not None
    assert line.startswith("train steps 5-24 (20 steps, ")
    assert "input 80%, compute 15%, other 5%" in line
    assert "input includes 20% of the pipeline slowing the step" in line


def test_without_a_step_alone_the_line_says_nothing_of_it() -> None:
    line = breakdown_line(_profile(input_seconds=0.1, compute_seconds=0.1, other_seconds=0.0))
    assert line is not None and "slowing" not in line and "profiler" not in line
    assert breakdown_line(None) is None
    assert breakdown_line(_profile(duration_seconds=0.0)) is None


def test_the_profilers_own_cost_is_a_share_of_its_own_where_the_hook_told_it() -> None:
    line = breakdown_line(
        _profile(input_seconds=0.1, compute_seconds=0.06, other_seconds=0.02, profiler_seconds=0.02)
    )
    assert line is not None and "input 50%, compute 30%, other 10%, profiler 10%" in line
