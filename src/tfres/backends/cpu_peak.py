"""What the CPU is and how fast its clock is said to run: the inputs of the peak FLOP/s estimate.

cpu_identity()   # vendor, family/model (x86) or implementer/part (ARM), ISA flags, cores
max_clock()      # the highest clock the OS reports, and where it was read

Both read /proc/cpuinfo and /sys only; ``parse_cpuinfo`` takes the text so that a capture
from another machine can be read the same way. Linux only: elsewhere the fields are None
and the flags empty.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path

import psutil

__all__ = ["ClockReading", "CpuIdentity", "cpu_identity", "max_clock", "parse_cpuinfo"]

CPUINFO = Path("/proc/cpuinfo")
CPUFREQ = Path("/sys/devices/system/cpu")


@dataclass(frozen=True)
class CpuIdentity:
    """Which CPU this is, as /proc/cpuinfo names it, and how many physical cores may be used.

    x86 fills ``vendor`` (``GenuineIntel``, ``AuthenticAMD``), ``family`` and ``model``;
    ARM64 fills ``arm_implementer`` (0x41 is Arm Ltd) and ``arm_part``. ``flags`` is
    x86's ``flags`` line or ARM's ``Features`` line. ``cores`` counts physical cores
    this process may run on (affinity scaled by hyper-threads per core); None when unknown.
    """

    arch: str
    vendor: str | None
    family: int | None
    model: int | None
    model_name: str | None
    arm_implementer: int | None
    arm_part: int | None
    flags: frozenset[str]
    cores: float | None


@dataclass(frozen=True)
class ClockReading:
    """A clock in MHz and where it was read (``source``), e.g. ``cpufreq cpuinfo_max_freq``."""

    mhz: float
    source: str


def _int(text: str | None) -> int | None:
    if not text:
        return None
    try:
        return int(text, 0)  # ARM writes 0x41; x86 writes 6
    except ValueError:
        return None


def first_cpuinfo_block(text: str) -> dict[str, str]:
    """The first processor block of a /proc/cpuinfo text, as key -> value."""
    info: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if info:
                break
            continue
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    return info


def parse_cpuinfo(text: str, *, arch: str, cores: float | None = None) -> CpuIdentity:
    """The identity in a /proc/cpuinfo text (its first processor block) for ``arch``."""
    info = first_cpuinfo_block(text)
    flags = info.get("flags") or info.get("Features") or ""
    return CpuIdentity(
        arch=arch,
        vendor=info.get("vendor_id") or None,
        family=_int(info.get("cpu family")),
        model=_int(info.get("model")),
        model_name=info.get("model name") or info.get("Model") or None,
        arm_implementer=_int(info.get("CPU implementer")),
        arm_part=_int(info.get("CPU part")),
        flags=frozenset(flags.split()),
        cores=cores,
    )


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _usable_physical_cores() -> float | None:
    physical = psutil.cpu_count(logical=False)
    logical = psutil.cpu_count(logical=True)
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = logical
    if not (physical and logical and usable):
        return None
    # affinity counts logical CPUs; two hyper-threads share one core's FMA units
    return min(float(physical), usable * physical / logical)


def cpu_identity(*, cpuinfo_text: str | None = None) -> CpuIdentity:
    """This machine's CPU; with no /proc/cpuinfo (not Linux), only ``arch`` and ``cores``."""
    text = cpuinfo_text if cpuinfo_text is not None else (_read(CPUINFO) or "")
    return parse_cpuinfo(text, arch=platform.machine().lower(), cores=_usable_physical_cores())


def max_clock(
    *, cpufreq_dir: Path = CPUFREQ, cpuinfo_text: str | None = None
) -> ClockReading | None:
    """The highest clock the OS reports: cpufreq's ``cpuinfo_max_freq`` (the rated maximum,
    turbo included where the driver exposes it), else the largest ``cpu MHz`` in
    /proc/cpuinfo (on most VMs the host's nominal clock, written once at boot). None where
    neither exists (many ARM VMs): the clock is then unknown, never assumed.
    """
    kilohertz: list[int] = []
    for path in sorted(cpufreq_dir.glob("cpu[0-9]*/cpufreq/cpuinfo_max_freq")):
        rated = _int((_read(path) or "").strip())
        if rated:
            kilohertz.append(rated)
    if kilohertz:
        return ClockReading(max(kilohertz) / 1000.0, "cpufreq cpuinfo_max_freq")
    text = cpuinfo_text if cpuinfo_text is not None else (_read(CPUINFO) or "")
    megahertz: list[float] = []
    for line in text.splitlines():
        key, _, mhz = line.partition(":")
        if key.strip() == "cpu MHz":
            try:
                megahertz.append(float(mhz))
            except ValueError:
                continue
    if megahertz and max(megahertz) > 0:
        return ClockReading(max(megahertz), "/proc/cpuinfo cpu MHz")
    return None
