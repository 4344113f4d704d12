"""input_pipeline: naive vs parallel tf.data with real CPU preprocessing."""

from __future__ import annotations

import pytest

from _bench_shared import TINY_PARAMS, tiny_bench_record
from tfres.workloads.input_pipeline import _verdict


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [w for w in tiny_bench_record().workloads if w["name"] == "input_pipeline"]


def test_naive_and_parallel_rows_with_samples_per_second(rows: list[dict]) -> None:
    assert [r["params"]["mode"] for r in rows] == ["naive", "parallel"]
    n = TINY_PARAMS["input_pipeline"]["samples"]
    for r in rows:
        assert r["error"] is None
        assert r["throughput_unit"] == "samples/s"
        assert r["throughput"] == pytest.approx(n / r["seconds_median"])
        assert 0 <= r["details"]["input_wait_fraction"] <= 1
        assert r["details"]["device_only_samples_per_second"] > 0
        assert "stft(256/128)" in r["details"]["preprocessing"]
        assert r["process_cpu_percent_mean"] > 0


def test_speedup_and_verdict_follow_from_the_figures(rows: list[dict]) -> None:
    naive, parallel = rows
    ratio = parallel["throughput"] / naive["throughput"]
    assert parallel["details"]["speedup_vs_naive"] == pytest.approx(ratio)
    assert naive["details"]["verdict"] == parallel["details"]["verdict"]
    assert f"gives {ratio:.2f}x" in naive["details"]["verdict"]


def test_verdict_says_whether_preprocessing_limits_the_device() -> None:
    slow = _verdict({"throughput": 100.0}, {"throughput": 190.0}, 1000.0)
    assert "so CPU preprocessing limits the device" in slow
    assert "1.90x" in slow and "still short of the device (19%)" in slow
    fine = _verdict({"throughput": 950.0}, {"throughput": 990.0}, 1000.0)
    assert "preprocessing keeps up" in fine and "short" not in fine
    assert _verdict({"throughput": None}, {"throughput": 1.0}, 2.0).startswith("not measured")
