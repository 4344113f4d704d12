"""Parsing and formatting of sizes, durations and percentages.

Sizes are ``int`` bytes, durations ``float`` seconds, percentages 0 to 100.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

__all__ = [
    "parse_size",
    "parse_size_or_percent",
    "parse_seconds",
    "format_bytes",
    "format_seconds",
    "format_percent",
    "format_cpu_list",
]

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "t": 1000**4,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_SIZE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str | int | float) -> int:
    """Parse a size such as ``"8GiB"``, ``"512 MB"`` or ``1024`` into bytes.

    Binary units (KiB, MiB, GiB, TiB) are powers of 1024; decimal ones (KB, MB, GB, TB,
    or K, M, G, T) are powers of 1000, as ``nvidia-smi`` and disk vendors use them.

    >>> parse_size("1.5GiB")
    1610612736
    """
    if isinstance(text, bool):
        raise ValueError(f"size must be a number of bytes or a string like '8GiB' (got {text!r})")
    if isinstance(text, (int, float)):
        value = float(text)
        unit = ""
    else:
        match = _SIZE_RE.match(str(text))
        if not match:
            raise ValueError(f"cannot read size {text!r}; write it like '2GiB', '512MB' or '1024'")
        value = float(match.group(1))
        unit = match.group(2).lower()
        if unit not in _SIZE_UNITS:
            raise ValueError(
                f"unknown size unit {match.group(2)!r} in {text!r}; "
                "use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB"
            )
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"size must be a finite number >= 0 (got {text!r})")
    return int(round(value * _SIZE_UNITS[unit]))


def parse_size_or_percent(text: str | int | float, *, total_bytes: int) -> int:
    """Parse ``"10%"`` (of ``total_bytes``) or any size :func:`parse_size` reads."""
    if isinstance(text, str) and text.strip().endswith("%"):
        number = text.strip()[:-1].strip()
        try:
            percent = float(number)
        except ValueError:
            raise ValueError(f"cannot read percentage {text!r}; write it like '10%'") from None
        if not math.isfinite(percent) or percent < 0:
            raise ValueError(f"percentage must be a finite number >= 0 (got {text!r})")
        return int(total_bytes * percent / 100.0)
    return parse_size(text)


_DURATION_UNITS = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "m": 60.0, "min": 60.0, "h": 3600.0}
_DURATION_RE = re.compile(r"^\s*([+-]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_seconds(text: str | int | float) -> float:
    """Parse a duration such as ``"0.1"``, ``"100ms"``, ``"2s"`` or ``"5min"`` into seconds."""
    if isinstance(text, bool):
        raise ValueError(f"duration must be a number of seconds (got {text!r})")
    if isinstance(text, (int, float)):
        value, unit = float(text), ""
    else:
        match = _DURATION_RE.match(str(text))
        if not match or match.group(2).lower() not in _DURATION_UNITS:
            raise ValueError(f"cannot read duration {text!r}; write it like '0.1', '100ms' or '2s'")
        value, unit = float(match.group(1)), match.group(2).lower()
    if not math.isfinite(value):
        raise ValueError(f"duration must be finite (got {text!r})")
    return value * _DURATION_UNITS[unit]


def format_bytes(n: int | float | None) -> str:
    """Format bytes with binary units: ``format_bytes(8 * 2**30) == "8.0 GiB"``.

    None gives "n/a".
    """
    if n is None:
        return "n/a"
    value = float(n)
    sign = "-" if value < 0 else ""
    value = abs(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{sign}{value:.0f} {unit}" if unit == "B" else f"{sign}{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def format_seconds(s: float | None) -> str:
    """Format seconds for people: ``"850 ms"``, ``"12.3 s"``, ``"4m 05s"``, ``"2h 03m"``."""
    if s is None:
        return "n/a"
    if s < 1:
        return f"{s * 1000:.0f} ms"
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{int(s // 60)}m {int(s % 60):02d}s"
    return f"{int(s // 3600)}h {int(s % 3600 // 60):02d}m"


def format_percent(p: float | None) -> str:
    """Format a 0-100 percentage; None gives "n/a"."""
    return "n/a" if p is None else f"{p:.0f}%"


def format_cpu_list(cpus: Sequence[int] | None) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2,5"``, the way ``taskset`` writes a CPU list; ``""`` for none."""
    if not cpus:
        return ""
    parts: list[str] = []
    start = prev = cpus[0]
    for c in [*cpus[1:], None]:
        if c is not None and c == prev + 1:
            prev = c
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if c is not None:
            start = prev = c
    return ",".join(parts)
