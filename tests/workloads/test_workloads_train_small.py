"""train_small: the Dense(10)/Dense(1) model, GradientTape loop and model.fit, for real."""

from __future__ import annotations

import math

import pytest

from _bench_shared import TINY_PARAMS, tiny_bench_record


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [w for w in tiny_bench_record().workloads if w["name"] == "train_small"]


def test_both_loops_ran_every_timed_epoch(rows: list[dict]) -> None:
    assert [r["params"]["loop"] for r in rows] == ["gradient_tape", "fit"]
    epochs = TINY_PARAMS["train_small"]["epochs"]
    for r in rows:
        assert r["repeats"] == epochs  # the warm-up epoch is not among them
        assert len(r["details"]["epoch_seconds"]) == epochs
        assert r["params"]["features"] == 100 and r["params"]["batch_size"] == 32


def test_steps_per_second_and_step_time_follow_from_epoch_times(rows: list[dict]) -> None:
    steps = math.ceil(TINY_PARAMS["train_small"]["samples"] / 32)
    for r in rows:
        d = r["details"]
        assert d["steps_per_epoch"] == steps
        assert r["throughput_unit"] == "steps/s"
        assert r["throughput"] == pytest.approx(steps / r["seconds_median"])
        assert d["step_seconds_median"] == pytest.approx(r["seconds_median"] / steps)
        assert math.isfinite(d["final_loss"]) and d["final_loss"] > 0  # random targets: no zero
