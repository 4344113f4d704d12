"""cpu_matmul: real NumPy products; its figures follow from its own timings."""

from __future__ import annotations

import pytest

from tfres.workloads import RESULT_KEYS, WorkloadContext
from tfres.workloads.cpu_matmul import WORKLOAD, blas_libraries

CPU = {
    "physical_cores": 2,
    "logical_cores": 2,
    "usable_cores": 2.0,
    "frequency_mhz": 2000.0,
    "isa_flags": {"avx2": True, "fma": True},
}


@pytest.fixture(scope="module")
def results() -> list[dict]:
    ctx = WorkloadContext(params={"sizes": [96, 192], "repeats": 3}, fingerprint={"cpu": CPU})
    return WORKLOAD.run(ctx)


def test_one_result_per_size_on_the_host(results: list[dict]) -> None:
    assert [(r["name"], r["device"], r["params"]["n"]) for r in results] == [
        ("cpu_matmul", "host", 96),
        ("cpu_matmul", "host", 192),
    ]
    for r in results:
        assert tuple(r) == RESULT_KEYS
        assert r["repeats"] == 3 and r["error"] is None
        assert r["params"]["dtype"] == "float32"


def test_gflops_is_two_n_cubed_over_the_median(results: list[dict]) -> None:
    for r in results:
        n = r["params"]["n"]
        expected = 2 * n**3 / r["seconds_median"] / 1e9
        assert r["throughput"] == pytest.approx(expected, rel=1e-6)
        assert r["throughput_unit"] == "GFLOP/s"
        d = r["details"]
        assert d["flops"] == 2 * n**3
        assert d["gflops_best"] >= r["throughput"]  # the best repeat is at least the median
        assert r["seconds_min"] <= r["seconds_median"] <= r["seconds_max"]


def test_fraction_of_peak_uses_the_fingerprint_cores_and_the_clock_read(
    results: list[dict],
) -> None:
    from tfres.workloads.peak import estimate_peak

    expected = estimate_peak(CPU)  # 2 cores from the fingerprint; family and clock read here
    for r in results:
        d = r["details"]
        assert d["peak_gflops"] == expected.gflops and d["peak_estimate"] == expected.how
        if expected.gflops is None:  # a CPU the table does not know, or no clock: no guess
            assert d["fraction_of_peak"] is None
            continue
        assert expected.cores == 2.0 and "2 physical cores" in d["peak_estimate"]
        assert d["fraction_of_peak"] == pytest.approx(r["throughput"] / d["peak_gflops"])


def test_blas_library_and_threads_are_named(results: list[dict]) -> None:
    from threadpoolctl import threadpool_info

    expected = [i["internal_api"] for i in threadpool_info() if i["user_api"] == "blas"]
    d = results[0]["details"]
    assert [b["internal_api"] for b in d["blas"]] == expected
    assert [b["internal_api"] for b in blas_libraries()] == expected
    if expected:
        assert d["blas_threads"] >= 1
