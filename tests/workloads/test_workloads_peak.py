"""The CPU peak estimate: cores x clock x FLOPs per cycle from the ISA flags."""

from __future__ import annotations

import pytest

from tfres.workloads.peak import estimate_peak, flops_per_cycle

CPU = {
    "physical_cores": 2,
    "logical_cores": 2,
    "usable_cores": 2.0,
    "frequency_mhz": 2600.0,
    "isa_flags": {"avx512f": True, "avx2": True, "fma": True},
}


@pytest.mark.parametrize(
    ("flags", "dtype", "isa", "per_cycle"),
    [
        ({"avx512f": True, "fma": True}, "float32", "AVX-512+FMA", 64),
        ({"avx512f": True, "fma": True}, "float64", "AVX-512+FMA", 32),
        ({"avx2": True, "fma": True}, "float32", "AVX2+FMA", 32),
        ({"avx2": True, "fma": True}, "float64", "AVX2+FMA", 16),
        ({"avx512f": True, "fma": False, "avx": True}, "float32", "AVX", 16),
        ({"sse2": True}, "float32", "SSE2", 8),
        ({"neon": True}, "float32", None, None),
    ],
)
def test_flops_per_cycle_from_flags(
    flags: dict, dtype: str, isa: str | None, per_cycle: int | None
) -> None:
    assert flops_per_cycle(flags, dtype) == (isa, per_cycle)


def test_estimate_from_a_fingerprint_says_how() -> None:
    p = estimate_peak(CPU)
    assert p.gflops == pytest.approx(2 * 2.6 * 64)
    assert "2 physical cores x 2.60 GHz x 64 float32 FLOPs/cycle" in p.how
    assert "AVX-512+FMA" in p.how and "2 FMA units" in p.how
    assert estimate_peak(CPU, dtype="float64").gflops == pytest.approx(2 * 2.6 * 32)


def test_hyperthreads_and_affinity_count_physical_cores_only() -> None:
    cpu = dict(CPU, physical_cores=4, logical_cores=8, usable_cores=4.0)
    assert estimate_peak(cpu).cores == pytest.approx(2.0)  # 4 of 8 hyper-threads = 2 cores
    cpu = dict(CPU, physical_cores=4, logical_cores=8, usable_cores=8.0)
    assert estimate_peak(cpu).cores == pytest.approx(4.0)


def test_unknown_isa_gives_none_and_says_why() -> None:
    p = estimate_peak(dict(CPU, isa_flags={"neon": True}))
    assert p.gflops is None
    assert p.how == "not estimated: ISA unknown on this machine"


def test_missing_keys_are_read_here_instead() -> None:
    p = estimate_peak({})
    assert "cores from psutil" in p.how and "ISA flags from NumPy" in p.how
    if p.gflops is not None:  # a VM may hide its clock; then it is None, never a guess
        assert p.gflops > 0 and p.cores and p.clock_mhz
