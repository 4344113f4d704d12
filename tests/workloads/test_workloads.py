"""The workload registry, the context and the result helpers (no TensorFlow needed)."""

from __future__ import annotations

import time

import pytest

from tfres.sampler.sampler import Sampler
from tfres.timeline import GpuSample, Sample
from tfres.workloads import RESULT_KEYS, WORKLOADS, Workload, WorkloadContext, make_result, variant
from tfres.workloads._context import (
    Span,
    complete_results,
    covering_samples,
    error_text,
    failure_text,
    tf_failures,
)


def test_registry_names_match_and_describe_themselves() -> None:
    assert list(WORKLOADS)[:5] == [
        "cpu_matmul",
        "tf_matmul",
        "train_small",
        "batch_sweep",
        "input_pipeline",
    ]
    for name, w in WORKLOADS.items():
        assert isinstance(w, Workload) and w.name == name
        assert w.description and callable(w.run)
        assert set(w.quick_params) == set(w.full_params), name
    assert WORKLOADS["cpu_matmul"].needs_tensorflow is False
    assert WORKLOADS["cpu_matmul"].per_device is False


def test_import_of_the_registry_does_not_import_tensorflow() -> None:
    import subprocess
    import sys

    code = "import sys, tfres.workloads, tfres.benchmark; print('tensorflow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_params_merge_overrides_and_reject_unknown_keys() -> None:
    w = WORKLOADS["cpu_matmul"]
    assert w.params(quick=True)["repeats"] == w.quick_params["repeats"]
    assert w.params(quick=False, overrides={"sizes": [7]})["sizes"] == [7]
    with pytest.raises(ValueError, match=r"cpu_matmul has no parameter 'bogus'.*repeats"):
        w.params(quick=True, overrides={"bogus": 1})


def _sample(t: float, cpu: float, rss: int, gpu_util: float | None = None) -> Sample:
    gpus = (GpuSample(index=0, util_percent=gpu_util),) if gpu_util is not None else ()
    return Sample(t_seconds=t, cpu_percent=cpu, process_rss_bytes=rss, gpus=gpus)


def test_covering_samples_take_the_interval_after_and_the_next_for_short_spans() -> None:
    samples = [_sample(t / 10, 10.0 * t, 100 + t) for t in range(10)]
    got = covering_samples(samples, 0.25, 0.45, 0.1)
    assert [s.t_seconds for s in got] == [0.3, 0.4, 0.5]
    short = covering_samples(samples, 0.51, 0.52, 0.001)
    assert [s.t_seconds for s in short] == [0.6]
    assert covering_samples(samples, 5.0, 6.0, 0.1) == []


def test_make_result_has_the_contract_keys_and_reads_samples_in_its_span() -> None:
    ctx = WorkloadContext()
    span = Span(start_seconds=0.0, end_seconds=2.0, cpu_start_seconds=1.0, cpu_end_seconds=2.5)
    r = make_result(
        ctx,
        name="x",
        device="GPU:0",
        params={"n": 1},
        times=[3.0, 1.0, 2.0],
        span=span,
        throughput=5,
        throughput_unit="it/s",
        details={"variant": "n=1"},
    )
    assert tuple(r) == RESULT_KEYS
    assert (r["seconds_median"], r["seconds_min"], r["seconds_max"]) == (2.0, 1.0, 3.0)
    assert r["repeats"] == 3
    assert r["process_cpu_percent_mean"] == pytest.approx(75.0)  # 1.5 CPU s over 2 s
    assert r["cpu_percent_mean"] is None  # no sampler: None, never 0
    assert variant(r) == "x n=1"
    samples = [_sample(0.5, 40.0, 10, 90.0), _sample(1.5, 60.0, 30, 70.0), _sample(9.0, 99.0, 99)]
    complete_results([r], samples, 0.5)
    assert r["cpu_percent_mean"] == pytest.approx(50.0)
    assert r["peak_rss_bytes"] == 30
    assert r["gpu_util_percent_mean"] == pytest.approx(80.0)
    assert r["process_cpu_percent_mean"] == pytest.approx(75.0)  # measured, kept


def test_context_spans_report_progress_and_real_phases() -> None:
    calls: list[tuple[float, str]] = []
    with Sampler(0.02) as sampler:
        ctx = WorkloadContext(sampler=sampler, progress=lambda f, m: calls.append((f, m)))
        with ctx.phase("w CPU:0"), ctx.span() as span:
            ctx.report(1.5, "half")
            end = time.perf_counter() + 0.1
            while time.perf_counter() < end:  # real CPU work for the span's process CPU
                sum(range(1000))
    assert calls == [(1.0, "half")]  # clamped to 0..1
    assert [p.name for p in sampler.phases] == ["w CPU:0"]
    assert span.end_seconds is not None and span.wall_seconds >= 0.09
    assert span.process_cpu_percent is not None and span.process_cpu_percent > 30
    assert ctx.samples_in(span)


def test_random_inputs_are_seeded_and_not_zero() -> None:
    a = WorkloadContext(seed=3).rng().standard_normal(100)
    b = WorkloadContext(seed=3).rng().standard_normal(100)
    assert (a == b).all() and (a != 0).all()


def test_error_text_is_one_short_line() -> None:
    err = RuntimeError("first line\nsecond line " + "x" * 500)
    assert error_text(err) == "RuntimeError: first line"
    assert len(error_text(RuntimeError("y" * 1000))) < 320


def test_tf_failures_name_out_of_memory_and_let_bugs_raise() -> None:
    tf = pytest.importorskip("tensorflow")
    oom = tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor")
    assert isinstance(oom, tf_failures(tf))
    assert failure_text(tf, oom, " at n=8192") == (
        "out of memory at n=8192: ResourceExhaustedError: OOM when allocating tensor"
    )
    assert failure_text(tf, MemoryError()) == "out of memory: MemoryError"
    shape = tf.errors.InvalidArgumentError(None, None, "Incompatible shapes")
    assert failure_text(tf, shape) == "InvalidArgumentError: Incompatible shapes"
    assert not isinstance(TypeError("a bug in tfres"), tf_failures(tf))  # not swallowed
