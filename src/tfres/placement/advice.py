"""What the placement advisor found: timings per device, where ops ran, and the verdict.

The results of :func:`tfres.placement.advisor.advise_placement`, frozen dataclasses with
``to_dict()``/``from_dict()`` so a record or a JSON file can carry them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CLEAR_RATIO", "DeviceTiming", "OpPlacement", "PlacementLog", "PlacementAdvice"]

#: A device "clearly" wins when its median is at least this much faster than the next one
#: and the two spreads (quartiles) do not overlap; below that, timings on a busy machine
#: wander by about as much (the benchmark in docs/benchmarks/placement.md shows the spread).
CLEAR_RATIO = 1.10


@dataclass(frozen=True)
class DeviceTiming:
    """Median seconds of one call of the function on ``device``, in three parts.

    ``transfer_in_seconds``: copying the array arguments onto the device; ``compute_seconds``:
    the call itself; ``transfer_out_seconds``: copying the returned tensors back to host
    memory. ``total_*`` are over the per-call sums. All ``None`` with ``error`` set when the
    function failed on this device.
    """

    device: str
    transfer_in_seconds: float | None = None
    compute_seconds: float | None = None
    transfer_out_seconds: float | None = None
    total_seconds: float | None = None
    total_min_seconds: float | None = None
    total_max_seconds: float | None = None
    repeats: int = 0
    error: str | None = None

    @property
    def transfer_seconds(self) -> float | None:
        """Input plus output transfer (medians)."""
        if self.transfer_in_seconds is None or self.transfer_out_seconds is None:
            return None
        return self.transfer_in_seconds + self.transfer_out_seconds

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "transfer_in_seconds": self.transfer_in_seconds,
            "compute_seconds": self.compute_seconds,
            "transfer_out_seconds": self.transfer_out_seconds,
            "total_seconds": self.total_seconds,
            "total_min_seconds": self.total_min_seconds,
            "total_max_seconds": self.total_max_seconds,
            "repeats": self.repeats,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DeviceTiming:
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


@dataclass(frozen=True)
class OpPlacement:
    """``count`` ops of type ``op_type`` ran on ``device``; ``off_target`` when that is not
    the device the function was pinned to."""

    op_type: str
    device: str
    count: int
    off_target: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "op_type": self.op_type,
            "device": self.device,
            "count": self.count,
            "off_target": self.off_target,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OpPlacement:
        return cls(str(d["op_type"]), str(d["device"]), int(d["count"]), bool(d.get("off_target")))


@dataclass(frozen=True)
class PlacementLog:
    """Where TensorFlow placed the ops of the function pinned to ``target``.

    ``fell_back``: op types that ran on a CPU although the function was pinned to a GPU (no
    GPU kernel, or soft placement moved them). ``copies``: tensors sent between devices
    inside the function. ``error`` says why the log is missing, if it is.
    """

    target: str
    ops: tuple[OpPlacement, ...] = ()
    fell_back: tuple[str, ...] = ()
    copies: int = 0
    source: str = "run_metadata"
    error: str | None = None

    @property
    def off_target(self) -> tuple[str, ...]:
        """Op types placed on another device than ``target``."""
        return tuple(sorted({o.op_type for o in self.ops if o.off_target}))

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "ops": [o.to_dict() for o in self.ops],
            "fell_back": list(self.fell_back),
            "copies": self.copies,
            "source": self.source,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PlacementLog:
        return cls(
            target=str(d["target"]),
            ops=tuple(OpPlacement.from_dict(o) for o in d.get("ops") or ()),
            fell_back=tuple(d.get("fell_back") or ()),
            copies=int(d.get("copies") or 0),
            source=str(d.get("source") or "run_metadata"),
            error=d.get("error"),
        )


@dataclass(frozen=True)
class PlacementAdvice:
    """Where to run a function, and the timings and placements that say so.

    ``best_device`` is the device with the lowest median total time; ``speedup`` is the next
    device's median over the best one's (``None`` with a single device). ``clear`` is False
    when the difference is within the noise (see :data:`CLEAR_RATIO`); the verdict then says
    that any of them will do.
    """

    best_device: str | None
    speedup: float | None
    clear: bool
    verdict: str
    timings: tuple[DeviceTiming, ...] = ()
    placements: tuple[PlacementLog, ...] = ()
    repeats: int = 0
    warmup: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    def timing(self, device: str) -> DeviceTiming:
        """The timing of ``device`` (``KeyError`` when it was not timed)."""
        for t in self.timings:
            if t.device == device:
                return t
        raise KeyError(device)

    def to_dict(self) -> dict[str, Any]:
        return {
            "best_device": self.best_device,
            "speedup": self.speedup,
            "clear": self.clear,
            "verdict": self.verdict,
            "timings": [t.to_dict() for t in self.timings],
            "placements": [p.to_dict() for p in self.placements],
            "repeats": self.repeats,
            "warmup": self.warmup,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PlacementAdvice:
        return cls(
            best_device=d.get("best_device"),
            speedup=d.get("speedup"),
            clear=bool(d.get("clear")),
            verdict=str(d.get("verdict") or ""),
            timings=tuple(DeviceTiming.from_dict(t) for t in d.get("timings") or ()),
            placements=tuple(PlacementLog.from_dict(p) for p in d.get("placements") or ()),
            repeats=int(d.get("repeats") or 0),
            warmup=int(d.get("warmup") or 0),
            notes=tuple(d.get("notes") or ()),
        )
