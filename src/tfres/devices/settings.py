"""The device settings checked before anything is applied (no TensorFlow needed).

:func:`tfres.configure` (this process) and :func:`child_environment` (``tfres run``'s child)
take the same settings; both check them here, so a bad value gives the same one-line
``ValueError`` showing the value, whichever way it is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tfres.units import parse_size

__all__ = ["count", "indices", "limits", "growth", "MIB"]

MIB = 1 << 20


def count(name: str, value: Any, *, minimum: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number (got {value!r})")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum} (got {value!r})")
    return value


def indices(name: str, value: Any) -> list[int] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ValueError(f"{name} must be a list of GPU indices like [0, 1] (got {value!r})")
    out: list[int] = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or item < 0:
            raise ValueError(f"{name} must hold GPU indices >= 0 (got {value!r})")
        if item not in out:
            out.append(item)
    return out


def _gpu_key(key: Any) -> int:
    """``0``, ``"0"``, ``"GPU:0"`` -> 0; a CPU key gets the explanation it needs."""
    text = str(key).strip().upper()
    if text.startswith(("CPU", "/DEVICE:CPU", "HOST")):
        raise ValueError(
            f"TensorFlow has no memory limit for the CPU (got {key!r}: it raises ValueError); "
            "for a host-memory budget use tfres.limit_memory('10%') or tfres run --memory-budget"
        )
    text = text.removeprefix("/DEVICE:").removeprefix("GPU:")
    if isinstance(key, bool) or not text.isdigit():
        raise ValueError(
            f"gpu_memory_limit_bytes keys are GPU indices like 0 or 'GPU:0' (got {key!r})"
        )
    return int(text)


def _limit(value: Any) -> int:
    try:
        n = parse_size(value)
    except ValueError as err:
        raise ValueError(f"gpu_memory_limit_bytes: {err}") from None
    if n < MIB:
        raise ValueError(f"gpu_memory_limit_bytes must be at least 1 MiB (got {value!r})")
    return n


def limits(value: Any) -> dict[int, int] | int | None:
    """None, one limit for every GPU (int), or {index: bytes}."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return {_gpu_key(k): _limit(v) for k, v in value.items()}
    return _limit(value)


def growth(value: Any) -> bool | list[int] | None:
    if value is None or isinstance(value, bool):
        return value
    return indices("gpu_memory_growth", value)
