"""tf_matmul: real TensorFlow products on the CPU, transfer timed apart from compute."""

from __future__ import annotations

import pytest

from _bench_shared import TINY_PARAMS, tiny_bench_record
from tfres.backends.tf_runtime import memory_info

pytestmark = pytest.mark.onednn  # the allocator's figures need oneDNN on: .ci/run runs both


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [w for w in tiny_bench_record().workloads if w["name"] == "tf_matmul"]


def test_one_row_per_size_on_the_tf_device(rows: list[dict]) -> None:
    assert [(r["device"], r["params"]["n"]) for r in rows] == [
        ("CPU:0", n) for n in TINY_PARAMS["tf_matmul"]["sizes"]
    ]
    assert all(r["repeats"] == TINY_PARAMS["tf_matmul"]["repeats"] for r in rows)


def test_compute_and_transfer_are_timed_apart(rows: list[dict]) -> None:
    for r in rows:
        n = r["params"]["n"]
        d = r["details"]
        assert r["throughput"] == pytest.approx(2 * n**3 / r["seconds_median"] / 1e9, rel=1e-6)
        assert d["transfer_bytes"] == 2 * n * n * 4  # two float32 matrices
        assert d["transfer_seconds_median"] > 0
        assert (
            d["transfer_seconds_min"] <= d["transfer_seconds_median"] <= d["transfer_seconds_max"]
        )
        rate = d["transfer_bytes"] / d["transfer_seconds_median"] / 1e9
        assert d["transfer_gbytes_per_second"] == pytest.approx(rate)


def test_allocator_peak_holds_both_inputs_and_the_product(rows: list[dict]) -> None:
    # TensorFlow's CPU allocator counts only allocations above ~256 KiB: n=64 reads 0 (a real
    # reading, not "unknown"); n=512 holds at least the 1 MiB product (TF may alias NumPy inputs)
    small, large = rows
    if memory_info("CPU:0") is None:  # oneDNN off: TensorFlow keeps no CPU statistics
        assert small["peak_tf_memory_bytes"] is None and large["peak_tf_memory_bytes"] is None
        return
    assert small["peak_tf_memory_bytes"] is not None and small["peak_tf_memory_bytes"] >= 0
    assert large["peak_tf_memory_bytes"] >= 512 * 512 * 4
