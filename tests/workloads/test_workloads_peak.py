"""The CPU peak estimate: physical cores x the clock read x FLOPs/cycle of the core family."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tfres.backends.cpu_peak import ClockReading, CpuIdentity, parse_cpuinfo
from tfres.workloads.peak import estimate_peak, vector_units

SAMPLES = Path(__file__).parents[1] / "backends" / "cpuinfo"


def captured(name: str, arch: str = "x86_64") -> CpuIdentity:
    return parse_cpuinfo((SAMPLES / name).read_text(), arch=arch, cores=2.0)


ZEN3 = captured("amd_epyc_zen3_vm.txt")
XEON = captured("intel_xeon_cascadelake_vm.txt")
N1 = captured("arm_neoverse_n1.txt", arch="aarch64")
PROC_MHZ = "/proc/cpuinfo cpu MHz"


def x86(vendor: str, family: int, model: int, flags: str, name: str = "") -> CpuIdentity:
    return CpuIdentity(
        "x86_64", vendor, family, model, name, None, None, frozenset(flags.split()), 2.0
    )


@pytest.mark.parametrize(
    ("cpu", "fp32", "fp64"),
    [
        (ZEN3, 32, 16),  # AMD Zen 3: 2 x 256-bit FMA
        (XEON, 64, 32),  # Xeon Cascade Lake: 2 x 512-bit FMA
        (N1, 16, 8),  # Neoverse N1: 2 x 128-bit NEON
        (replace(XEON, model_name="Intel(R) Xeon(R) Silver 4214 CPU @ 2.20GHz"), 32, 16),
        (replace(XEON, model_name="Intel(R) Xeon(R) Gold 5218 CPU @ 2.30GHz"), 32, 16),
        (replace(XEON, model_name="Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"), 64, 32),
        (replace(XEON, model_name="11th Gen Intel(R) Core(TM) i7-1165G7"), 32, 16),
        (x86("AuthenticAMD", 0x17, 0x01, "avx avx2 fma"), 16, 8),  # Zen 1: 128-bit units
        (x86("AuthenticAMD", 0x17, 0x31, "avx avx2 fma"), 32, 16),  # Zen 2
        (x86("AuthenticAMD", 0x19, 0x11, "avx avx2 fma avx512f"), 32, 16),  # Zen 4
        (x86("AuthenticAMD", 0x1A, 0x02, "avx avx2 fma avx512f"), 64, 32),  # Zen 5
        (x86("GenuineIntel", 6, 0x3F, "avx avx2 fma"), 32, 16),  # Haswell
        (x86("HygonGenuine", 0x18, 0, "avx avx2 fma"), 32, 16),  # by flags
        (x86("GenuineIntel", 6, 0x2A, "sse2 avx"), 16, 8),  # Sandy Bridge: no FMA
        (replace(N1, arm_part=0xD40), 32, 16),  # Neoverse V1: 4 x 128-bit NEON
    ],
)
def test_documented_flops_per_cycle(cpu: CpuIdentity, fp32: int, fp64: int) -> None:
    units = vector_units(cpu)
    assert units is not None
    assert (units.per_cycle("float32"), units.per_cycle("float64")) == (fp32, fp64)


def test_unknown_arm_part_has_no_table_entry() -> None:
    assert vector_units(replace(N1, arm_part=0x123)) is None
    assert vector_units(replace(N1, arm_implementer=0x61)) is None  # not Arm Ltd's numbering


def test_zen3_vm_from_its_captured_cpuinfo_and_clock() -> None:
    clock = ClockReading(2445.426, PROC_MHZ)
    p = estimate_peak(identity=ZEN3, clock=clock)
    assert p.gflops == pytest.approx(2 * 2.445426 * 32, abs=1e-3)
    assert p.how == (
        "2 physical cores x 2.45 GHz (/proc/cpuinfo cpu MHz) x 32 float32 FLOPs/cycle "
        "(AMD Zen 3 (family 19h): 2 x 256-bit FMA); the nominal clock: cores that boost above "
        "it can pass this peak"
    )
    assert estimate_peak(identity=ZEN3, clock=clock, dtype="float64").gflops == pytest.approx(
        2 * 2.445426 * 16, abs=1e-3
    )


def test_xeon_vm_doubles_zen3_per_cycle() -> None:
    p = estimate_peak(identity=XEON, clock=ClockReading(2593.906, PROC_MHZ))
    assert p.gflops == pytest.approx(2 * 2.593906 * 64, abs=1e-3)
    assert p.clock_source == PROC_MHZ and "2 x 512-bit FMA" in p.how


def test_a_rated_maximum_clock_carries_no_nominal_warning() -> None:
    p = estimate_peak(identity=ZEN3, clock=ClockReading(3500.0, "cpufreq cpuinfo_max_freq"))
    assert p.gflops == pytest.approx(2 * 3.5 * 32)
    assert p.how.endswith(
        "(cpufreq cpuinfo_max_freq) x 32 float32 FLOPs/cycle "
        "(AMD Zen 3 (family 19h): 2 x 256-bit FMA)"
    )


def test_fingerprint_cores_include_affinity_and_hyperthreads() -> None:
    clock = ClockReading(2000.0, PROC_MHZ)
    half = {"physical_cores": 4, "logical_cores": 8, "usable_cores": 4.0}
    assert estimate_peak(half, identity=ZEN3, clock=clock).cores == pytest.approx(2.0)
    full = dict(half, usable_cores=8.0)
    assert estimate_peak(full, identity=ZEN3, clock=clock).cores == pytest.approx(4.0)


def test_no_clock_or_unknown_cpu_gives_none_and_says_which() -> None:
    p = estimate_peak(identity=N1, clock=None)
    assert p.gflops is None and p.flops_per_cycle == 16
    assert p.how == "not estimated: clock unknown for this CPU"
    q = estimate_peak(identity=replace(N1, arm_part=0x123), clock=ClockReading(3000.0, PROC_MHZ))
    assert q.gflops is None and "FLOPs per cycle unknown" in q.how


def test_this_machine() -> None:
    p = estimate_peak()
    if p.gflops is not None:  # a VM may hide its clock: then None, never a guess
        assert p.gflops > 0 and p.cores and p.clock_mhz and p.clock_source in p.how
