"""The CPU's theoretical peak FLOP/s: cores x clock x FLOPs per cycle from the ISA flags.

The FLOPs per cycle per core assume two fused multiply-add (FMA) units, each doing a
multiply and an add on every lane of a vector each cycle, which is what server x86 cores
since Haswell (AVX2) and Skylake-SP (AVX-512) have:

==================  =========  ====================  ====================
instructions        width      FP32 FLOPs/cycle      FP64 FLOPs/cycle
==================  =========  ====================  ====================
AVX-512 + FMA       512 bit    2 x 16 x 2 = 64       2 x 8 x 2 = 32
AVX2 + FMA          256 bit    2 x 8 x 2 = 32        2 x 4 x 2 = 16
AVX (no FMA)        256 bit    8 mul + 8 add = 16    4 + 4 = 8
SSE2                128 bit    4 mul + 4 add = 8     2 + 2 = 4
==================  =========  ====================  ====================

Cores are physical cores this process may run on (hyper-threads share the FMA units);
the clock is the highest one the OS reports. CPUs with one AVX-512 unit (many client and
lower-end server parts) or a turbo clock above the reported one make the real peak lower
or higher: the estimate is an upper bound to compare against, not a promise.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["PeakEstimate", "estimate_peak", "flops_per_cycle"]


@dataclass(frozen=True)
class PeakEstimate:
    """The estimate and how it was made; ``gflops`` is None when an input is unknown."""

    gflops: float | None
    cores: float | None
    clock_mhz: float | None
    flops_per_cycle: int | None
    isa: str | None
    dtype: str
    how: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_TABLE = {
    # isa: (fp32, fp64) FLOPs per cycle per core
    "AVX-512+FMA": (64, 32),
    "AVX2+FMA": (32, 16),
    "AVX": (16, 8),
    "SSE2": (8, 4),
}


def flops_per_cycle(
    flags: Mapping[str, Any], dtype: str = "float32"
) -> tuple[str | None, int | None]:
    """The ISA level named by ``flags`` (``avx512f``, ``avx2``, ``fma``, ``avx``) and its
    FLOPs per cycle per core for ``dtype``; ``(None, None)`` for a CPU this table does not know.
    """
    f = {str(k).lower(): bool(v) for k, v in flags.items()}
    if f.get("avx512f") and f.get("fma"):
        isa = "AVX-512+FMA"
    elif f.get("avx2") and f.get("fma"):
        isa = "AVX2+FMA"
    elif f.get("avx"):
        isa = "AVX"
    elif f.get("sse2"):
        isa = "SSE2"
    else:
        return None, None
    fp32, fp64 = _TABLE[isa]
    return isa, fp64 if dtype == "float64" else fp32


def _fallback_flags() -> dict[str, bool]:
    import importlib

    feats: dict[str, bool] = {}
    for module in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
        try:  # NumPy's own CPU dispatch table (private, but stable for years)
            feats = dict(importlib.import_module(module).__cpu_features__)
            break
        except (ImportError, AttributeError):
            continue
    if not feats:
        return {}
    return {
        "avx512f": bool(feats.get("AVX512F")),
        "avx2": bool(feats.get("AVX2")),
        "fma": bool(feats.get("FMA3")),
        "avx": bool(feats.get("AVX")),
        "sse2": bool(feats.get("SSE2")),
    }


def _fallback_cores_and_clock() -> tuple[float | None, float | None]:
    import psutil

    physical = psutil.cpu_count(logical=False)
    logical = psutil.cpu_count(logical=True)
    try:
        usable: int | None = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = logical
    cores: float | None = None
    if physical and logical and usable:
        # affinity counts logical CPUs; scale it to physical cores
        cores = min(float(physical), usable * physical / logical)
    try:
        freq = psutil.cpu_freq()
    except (OSError, RuntimeError, NotImplementedError):
        freq = None
    clock = None
    if freq is not None:
        clock = float(freq.max) if freq.max else (float(freq.current) if freq.current else None)
    return cores, clock


def estimate_peak(cpu: Mapping[str, Any] | None = None, *, dtype: str = "float32") -> PeakEstimate:
    """Estimate the CPU's peak GFLOP/s for ``dtype`` from a fingerprint's ``cpu`` section.

    Missing keys are read here instead: cores and clock through psutil, ISA flags from
    NumPy's CPU feature table. On a CPU the table does not know (ARM, say) or a VM that
    reports no clock, ``gflops`` is None and ``how`` says which input is missing.

    >>> estimate_peak({"physical_cores": 2, "logical_cores": 2, "usable_cores": 2,
    ...                "frequency_mhz": 2600, "isa_flags": {"avx512f": True, "fma": True}}).gflops
    332.8
    """
    cpu = dict(cpu or {})
    sources = []
    physical = cpu.get("physical_cores")
    logical = cpu.get("logical_cores")
    usable = cpu.get("usable_cores")
    clock = cpu.get("frequency_mhz")
    cores: float | None = None
    if physical and logical and usable:
        cores = min(float(physical), float(usable) * float(physical) / float(logical))
        sources.append("cores from the fingerprint")
    elif physical:
        cores = float(physical)
        sources.append("cores from the fingerprint")
    fb_cores, fb_clock = (None, None)
    if cores is None or not clock:
        fb_cores, fb_clock = _fallback_cores_and_clock()
    if cores is None:
        cores = fb_cores
        sources.append("cores from psutil")
    if not clock:
        clock = fb_clock
        sources.append("clock from psutil")
    else:
        sources.append("clock from the fingerprint")
    flags = cpu.get("isa_flags")
    if not flags:
        flags = _fallback_flags()
        sources.append("ISA flags from NumPy")
    else:
        sources.append("ISA flags from the fingerprint")
    isa, per_cycle = flops_per_cycle(flags or {}, dtype)
    inputs = (("cores", cores), ("clock", clock), ("ISA", per_cycle))
    missing = [what for what, value in inputs if not value]
    if missing:
        return PeakEstimate(
            None,
            cores,
            clock,
            per_cycle,
            isa,
            dtype,
            f"not estimated: {', '.join(missing)} unknown on this machine",
        )
    assert cores is not None and clock is not None and per_cycle is not None
    gflops = round(cores * clock * 1e6 * per_cycle / 1e9, 3)
    how = (
        f"{cores:g} physical cores x {clock / 1000:.2f} GHz x {per_cycle} {dtype} FLOPs/cycle "
        f"({isa}, assuming 2 FMA units per core); {', '.join(sources)}"
    )
    return PeakEstimate(gflops, cores, float(clock), per_cycle, isa, dtype, how)
