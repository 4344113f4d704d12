from __future__ import annotations

import pytest

from tfres.workloads import RESULT_KEYS, WORKLOADS, WorkloadContext

TINY = {"examples": 64, "image_size": 96, "batch_size": 16, "hidden": 16, "repeats": 2}


@pytest.fixture(scope="module")
def results():
    progress: list[tuple[float, str]] = []
    ctx = WorkloadContext(quick=True, params=TINY, progress=lambda f, m: progress.append((f, m)))
    rows = WORKLOADS["overlap"].run(ctx)
    return rows, progress


def test_registered_and_reports_both_variants(results):
    rows, progress = results
    assert "overlap" in WORKLOADS
    assert [r["params"]["pipeline"] for r in rows] == ["naive", "overlapped"]
    for r in rows:
        assert tuple(r) == RESULT_KEYS
        assert r["error"] is None
        assert r["device"] == "CPU:0"
        assert r["repeats"] == TINY["repeats"]
        assert len(r["details"]["epoch_seconds"]) == TINY["repeats"]
        assert r["throughput_unit"] == "examples/s"
        # throughput is the examples of one epoch over its median time
        assert r["throughput"] == pytest.approx(r["params"]["examples"] / r["seconds_median"])
        assert 0.0 <= r["details"]["overlap_fraction"] <= 1.0
        assert r["details"]["overlap_source"] == "spans"
    assert progress[-1] == (1.0, "done")


def test_naive_pipeline_never_overlaps_and_speedup_is_the_ratio(results):
    rows, _ = results
    naive, overlapped = rows
    # sequential by construction: the host prepares a batch only when the step asks for it
    assert naive["details"]["overlap_fraction"] < 0.05
    assert overlapped["details"]["speedup"] == pytest.approx(
        naive["seconds_median"] / overlapped["seconds_median"]
    )
    assert naive["details"]["preprocess_busy_fraction"] > 0
    assert overlapped["details"]["compute_busy_fraction"] > 0
