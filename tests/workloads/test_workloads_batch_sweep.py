"""batch_sweep: where larger batches stop paying, and out-of-memory caught for real."""

from __future__ import annotations

import pytest

from _bench_shared import TINY_PARAMS, tiny_bench_record
from tfres.backends.tf_runtime import memory_info
from tfres.workloads import WorkloadContext
from tfres.workloads.batch_sweep import WORKLOAD, verdict


def test_verdict_names_where_bigger_batches_stop_paying() -> None:
    text, best = verdict([(16, 1000.0), (128, 4000.0), (512, 4200.0)])
    assert best == 128
    assert text.startswith("larger batches stop paying above 128: batch 512 gives 1.05x")
    text, best = verdict([(512, 9000.0), (16, 1000.0), (128, 4000.0)])  # any order
    assert best == 512 and text.startswith("every larger batch paid: batch 512 gives 9.0x")
    assert verdict([(16, 1000.0), (128, None)]) == ("only batch 16 ran (1000 samples/s)", 16)
    assert verdict([(16, None)]) == ("no batch size ran to the end", None)


@pytest.mark.onednn
def test_one_row_per_batch_size_with_samples_per_second() -> None:
    rows = [w for w in tiny_bench_record().workloads if w["name"] == "batch_sweep"]
    p = TINY_PARAMS["batch_sweep"]
    cpu_stats = memory_info("CPU:0") is not None
    assert [r["params"]["batch_size"] for r in rows] == p["batch_sizes"]
    for r in rows:
        assert r["error"] is None
        assert r["throughput"] == pytest.approx(p["samples"] / r["seconds_median"])
        if cpu_stats:  # tiny tensors: TF's CPU allocator may say 0
            assert r["peak_tf_memory_bytes"] is not None
        else:  # oneDNN off: TensorFlow keeps no CPU allocator statistics, and says so
            assert r["peak_tf_memory_bytes"] is None
        assert r["peak_rss_bytes"] > 0
        assert r["details"]["verdict"] == rows[0]["details"]["verdict"]
    gain = rows[1]["throughput"] / rows[0]["throughput"]
    assert rows[1]["details"]["gain_vs_previous"] == pytest.approx(gain)
    assert rows[0]["details"]["gain_vs_previous"] is None


@pytest.mark.slow
@pytest.mark.onednn  # the CPU allocator that fails differs with oneDNN on
def test_out_of_memory_is_a_result_not_a_crash() -> None:
    # batch 2**20 of a 65 536-wide layer needs 256 GiB for one activation: TensorFlow's
    # allocator really fails (after its 10 s retry) and the sweep must record it and go on
    params = {
        "batch_sizes": [16, 2**20, 2**21],
        "samples": 2**20,
        "features": 1,
        "hidden": 2**16,
        "layers": 1,
        "classes": 2,
        "repeats": 1,
        "max_steps_per_epoch": 2,
    }
    rows = WORKLOAD.run(WorkloadContext(params=params))
    small, big, bigger = rows
    assert small["error"] is None and small["throughput"] > 0
    assert small["throughput"] == pytest.approx(2 * 16 / small["seconds_median"])
    assert big["error"].startswith("out of memory at batch 1048576: ResourceExhaustedError")
    assert big["details"]["out_of_memory"] is True and big["throughput"] is None
    assert bigger["error"] == "skipped: batch 1048576 already ran out of memory"
    assert small["details"]["verdict"] == f"only batch 16 ran ({small['throughput']:.0f} samples/s)"
