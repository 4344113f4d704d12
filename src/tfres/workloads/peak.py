"""The CPU's theoretical peak FLOP/s: physical cores x the clock read x FLOPs per cycle per core.

FLOPs per cycle per core come from the vector units each core family is documented to have
(the vendors' optimization guides, cited in docs/benchmarks/bench.md): an FMA unit does a
multiply and an add on every lane each cycle, so a 256-bit FMA unit does 8 lanes x 2 = 16
FP32 FLOPs per cycle, and a 128-bit NEON pipe 4 x 2 = 8.

===============================================  ==========  ========  ========
core family (how it is recognised)               FMA units   FP32/cyc  FP64/cyc
===============================================  ==========  ========  ========
Intel Xeon with AVX-512 (Skylake-SP and later)   2 x 512     64        32
Intel Xeon Bronze/Silver/Gold 5xxx, client AVX   1 x 512     32        16
Intel with AVX2 + FMA (Haswell and later)        2 x 256     32        16
AMD family 17h model < 30h (Zen, Zen+)           2 x 128     16        8
AMD family 17h model >= 30h, 19h (Zen 2, 3, 4)   2 x 256     32        16
AMD family 1Ah (Zen 5, desktop and server)       2 x 512     64        32
Arm Neoverse N1 / N2, Cortex-A72/A76 (NEON)      2 x 128     16        8
Arm Neoverse V1 / V2 (NEON)                      4 x 128     32        16
other x86 by flags: AVX2+FMA / AVX / SSE2        -           32/16/8   16/8/4
===============================================  ==========  ========  ========

The clock is read, never assumed (:func:`tfres.backends.cpu_peak.max_clock`): cpufreq's
rated maximum where the kernel exposes it, else /proc/cpuinfo's ``cpu MHz``, which on a VM is
the host's nominal clock. A core that turbos above it can exceed this "peak": the estimate is
a reference, and ``how`` says which clock it used.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from tfres.backends.cpu_peak import ClockReading, CpuIdentity, cpu_identity, max_clock

#: where the clock came from when no cpufreq is there (most VMs): the nominal clock, not the
#: boost (on the AMD EPYC VM of docs/benchmarks/bench.md, 2.45 GHz read, 3.1 GHz measured)
NOMINAL_CLOCK_SOURCE = "/proc/cpuinfo cpu MHz"

__all__ = ["PeakEstimate", "VectorUnits", "estimate_peak", "vector_units"]


@dataclass(frozen=True)
class VectorUnits:
    """A core family's floating-point units and what they do per cycle."""

    family: str
    fp32_per_cycle: int
    fp64_per_cycle: int

    def per_cycle(self, dtype: str) -> int:
        return self.fp64_per_cycle if dtype == "float64" else self.fp32_per_cycle


@dataclass(frozen=True)
class PeakEstimate:
    """The estimate and how it was made; ``gflops`` is None when an input is unknown."""

    gflops: float | None
    cores: float | None
    clock_mhz: float | None
    clock_source: str | None
    flops_per_cycle: int | None
    isa: str | None
    dtype: str
    how: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_ARM_PARTS = {  # Arm Ltd (implementer 0x41) part numbers -> NEON pipes of 128 bits
    0xD08: ("Arm Cortex-A72", 2),
    0xD0B: ("Arm Cortex-A76", 2),
    0xD0C: ("Arm Neoverse N1", 2),
    0xD49: ("Arm Neoverse N2", 2),
    0xD40: ("Arm Neoverse V1", 4),
    0xD4F: ("Arm Neoverse V2", 4),
}
_ONE_FMA_XEON = re.compile(r"Xeon.*\b(Bronze|Silver|Gold 5\d{3})", re.IGNORECASE)


def _units(family: str, width_bits: int, units: int) -> VectorUnits:
    fp32 = units * (width_bits // 32) * 2
    return VectorUnits(f"{family}: {units} x {width_bits}-bit FMA", fp32, fp32 // 2)


def _intel(cpu: CpuIdentity) -> VectorUnits | None:
    flags = cpu.flags
    if "avx512f" in flags and "fma" in flags:
        name = cpu.model_name or ""
        if "Xeon" in name and not _ONE_FMA_XEON.search(name):
            return _units("Intel Xeon AVX-512", 512, 2)
        return _units("Intel AVX-512, one FMA unit (client or lower Xeon SKU)", 512, 1)
    if "avx2" in flags and "fma" in flags:
        return _units("Intel AVX2", 256, 2)
    return None


def _amd(cpu: CpuIdentity) -> VectorUnits | None:
    if cpu.family == 0x17 and cpu.model is not None:
        if cpu.model < 0x30:
            return _units("AMD Zen/Zen+ (family 17h)", 128, 2)
        return _units("AMD Zen 2 (family 17h)", 256, 2)
    if cpu.family == 0x19:
        zen = "Zen 4, AVX-512 in two 256-bit halves" if "avx512f" in cpu.flags else "Zen 3"
        return _units(f"AMD {zen} (family 19h)", 256, 2)
    if cpu.family == 0x1A:
        return _units("AMD Zen 5 (family 1Ah)", 512, 2)
    return None


def _by_flags(cpu: CpuIdentity) -> VectorUnits | None:
    flags = cpu.flags
    if "avx2" in flags and "fma" in flags:
        return VectorUnits("x86 AVX2+FMA, 2 FMA units assumed", 32, 16)
    if "avx" in flags:
        return VectorUnits("x86 AVX, separate 256-bit add and multiply", 16, 8)
    if "sse2" in flags:
        return VectorUnits("x86 SSE2, separate 128-bit add and multiply", 8, 4)
    return None


def vector_units(cpu: CpuIdentity) -> VectorUnits | None:
    """The core family's vector units; None for a CPU the table does not know (then no
    peak is estimated rather than a guessed one)."""
    if cpu.arch in ("aarch64", "arm64"):
        if cpu.arm_implementer == 0x41 and cpu.arm_part in _ARM_PARTS:
            name, pipes = _ARM_PARTS[cpu.arm_part]
            return _units(f"{name} NEON", 128, pipes)
        return None
    known = None
    if cpu.vendor == "GenuineIntel":
        known = _intel(cpu)
    elif cpu.vendor == "AuthenticAMD":
        known = _amd(cpu)
    return known or _by_flags(cpu)


class _ReadHere:
    """The default of ``estimate_peak(clock=...)``: read the clock from this machine."""


READ_HERE = _ReadHere()


def _cores(cpu_section: Mapping[str, Any], identity: CpuIdentity) -> float | None:
    """Physical cores this process may use: the fingerprint's (cgroup quota included), else
    the identity's."""
    physical = cpu_section.get("physical_cores")
    logical = cpu_section.get("logical_cores")
    usable = cpu_section.get("usable_cores")
    if physical and logical and usable:
        return min(float(physical), float(usable) * float(physical) / float(logical))
    return float(physical) if physical else identity.cores


def estimate_peak(
    cpu: Mapping[str, Any] | None = None,
    *,
    dtype: str = "float32",
    identity: CpuIdentity | None = None,
    clock: ClockReading | None | _ReadHere = READ_HERE,
) -> PeakEstimate:
    """Estimate the CPU's peak GFLOP/s for ``dtype``.

        ``cpu`` is a fingerprint's ``cpu`` section (for the cores this process may use, cgroup
        quota included); ``identity`` and ``clock`` are read from this machine when not given
    (``clock=None`` says there is no clock to read).
        Where the table does not know the CPU or the OS reports no clock, ``gflops`` is None and
        ``how`` names the missing input.

        >>> from tfres.backends.cpu_peak import ClockReading, parse_cpuinfo
        >>> zen3 = parse_cpuinfo("vendor_id: AuthenticAMD\\ncpu family: 25\\nmodel: 1\\n"
        ...                      "flags: avx avx2 fma", arch="x86_64", cores=2.0)
        >>> estimate_peak(identity=zen3, clock=ClockReading(2445.0, "/proc/cpuinfo cpu MHz")).gflops
        156.48
    """
    identity = identity or cpu_identity()
    clock = max_clock() if isinstance(clock, _ReadHere) else clock
    cores = _cores(dict(cpu or {}), identity)
    units = vector_units(identity)
    per_cycle = units.per_cycle(dtype) if units else None
    clock_mhz = clock.mhz if clock else None
    inputs = (("physical cores", cores), ("clock", clock_mhz), ("FLOPs per cycle", per_cycle))
    missing = [name for name, value in inputs if not value]
    isa = units.family if units else None
    if missing:
        why = f"not estimated: {', '.join(missing)} unknown for this CPU"
        if units is None:
            why += f" ({identity.model_name or identity.arch})"
        return PeakEstimate(
            None, cores, clock_mhz, clock.source if clock else None, per_cycle, isa, dtype, why
        )
    assert cores is not None and clock is not None and per_cycle is not None and units
    gflops = round(cores * clock.mhz * per_cycle / 1e3, 3)
    how = (
        f"{cores:g} physical cores x {clock.mhz / 1000:.2f} GHz ({clock.source}) x {per_cycle} "
        f"{dtype} FLOPs/cycle ({units.family})"
    )
    if clock.source == NOMINAL_CLOCK_SOURCE:
        how += "; the nominal clock: cores that boost above it can pass this peak"
    return PeakEstimate(gflops, cores, clock.mhz, clock.source, per_cycle, isa, dtype, how)
