"""The placement advisor: measure where a function should run, instead of guessing.

For small models the transfer to a GPU can cost more than the GPU saves. :func:`advise_placement`
times a function on each logical device (``CPU:0``, ``CPU:1`` ..., ``GPU:0`` ...), with the
input transfer, the compute and the output transfer timed apart, and says where it should
run and by how much. It also reports where TensorFlow really placed each op of the function,
flagging ops that fell back to the CPU inside a function meant for a GPU.

    advice = tfres.advise_placement(predict, x_batch)
    advice.verdict   # "run on CPU:0: 1.8x faster than GPU:0, whose 3.2 ms of transfer ..."
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tfres.errors import NoGpuError, TfresError
from tfres.units import format_seconds
from tfres.user_code import check_reference, load_callable

__all__ = [
    "CLEAR_RATIO",
    "DeviceTiming",
    "OpPlacement",
    "PlacementLog",
    "PlacementAdvice",
    "advise_placement",
    "load_callable",
    "check_reference",
    "summarize_placement",
]

#: A device "clearly" wins when its median is at least this much faster than the next one
#: and the two spreads (quartiles) do not overlap; below that, timings on a busy machine
#: wander by about as much (the benchmark in docs/benchmarks/placement.md shows the spread).
CLEAR_RATIO = 1.10


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return format_seconds(seconds)


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


# -- measuring --------------------------------------------------------------------------


def _quartiles(values: Sequence[float]) -> tuple[float, float]:
    if len(values) < 4:
        return min(values), max(values)
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def _timing(device: str, parts: dict[str, list[float]]) -> tuple[DeviceTiming, list[float]]:
    triples = zip(parts["transfer_in"], parts["compute"], parts["transfer_out"], strict=True)
    totals = [a + b + c for a, b, c in triples]
    timing = DeviceTiming(
        device=device,
        transfer_in_seconds=statistics.median(parts["transfer_in"]),
        compute_seconds=statistics.median(parts["compute"]),
        transfer_out_seconds=statistics.median(parts["transfer_out"]),
        total_seconds=statistics.median(totals),
        total_min_seconds=min(totals),
        total_max_seconds=max(totals),
        repeats=len(totals),
    )
    return timing, totals


def _placement_log(fn: Callable[..., Any], args: Sequence[Any], device: str) -> PlacementLog:
    from tfres.backends.tf_placement import placed_ops

    try:
        ops = placed_ops(fn, args, device)
    except Exception as err:  # a function that cannot be traced still gets its timings
        return PlacementLog(
            target=device, error=f"{type(err).__name__}: {err}".splitlines()[0][:300]
        )
    return summarize_placement(ops, device)


def summarize_placement(ops: Sequence[tuple[str, str]], device: str) -> PlacementLog:
    """The placement log of a function pinned to ``device`` from its ``(op_type, device)``
    pairs: op types counted per device, function plumbing left out, tensors sent between
    devices counted, ops off ``device`` flagged, and on a GPU the ops that fell back to a CPU.

        summarize_placement([("MatMul", "GPU:0"), ("AsString", "CPU:0")], "GPU:0").fell_back
        # ('AsString',)
    """
    from tfres.backends.tf_placement import PLUMBING_OPS

    counts = Counter((op, where) for op, where in ops if op not in PLUMBING_OPS)
    copies = sum(1 for op, _ in ops if op in ("_Send", "_HostSend"))
    rows = tuple(
        OpPlacement(op, where, n, off_target=where != device)
        for (op, where), n in sorted(counts.items(), key=lambda kv: (kv[0][1], -kv[1], kv[0][0]))
    )
    fell_back: tuple[str, ...] = ()
    if device.startswith("GPU"):
        fell_back = tuple(sorted({r.op_type for r in rows if r.device.startswith("CPU")}))
    return PlacementLog(target=device, ops=rows, fell_back=fell_back, copies=copies)


def _verdict(
    ranked: list[DeviceTiming], totals: dict[str, list[float]]
) -> tuple[float | None, bool, str]:
    best = ranked[0]
    assert best.total_seconds is not None
    if len(ranked) == 1:
        return None, False, f"only {best.device} was timed: {_ms(best.total_seconds)} a call"
    other = ranked[1]
    assert other.total_seconds is not None
    speedup = other.total_seconds / best.total_seconds if best.total_seconds > 0 else None
    _, best_q3 = _quartiles(totals[best.device])
    other_q1, _ = _quartiles(totals[other.device])
    clear = speedup is not None and speedup >= CLEAR_RATIO and best_q3 < other_q1
    if not clear:
        ratio = "n/a" if speedup is None else f"{speedup:.2f}x"
        return (
            speedup,
            False,
            (
                f"no clear winner: {best.device} and {other.device} are within {ratio} of each "
                f"other ({_ms(best.total_seconds)} vs {_ms(other.total_seconds)} a call); "
                "either will do"
            ),
        )
    why: str
    if (
        other.compute_seconds is not None
        and best.compute_seconds is not None
        and other.transfer_seconds is not None
        and other.compute_seconds < best.compute_seconds
    ):
        why = (
            f"whose {_ms(other.transfer_seconds)} of transfer outweighs its faster compute "
            f"({_ms(other.compute_seconds)} vs {_ms(best.compute_seconds)})"
        )
    elif (
        other.transfer_seconds is not None
        and other.compute_seconds is not None
        and other.transfer_seconds > other.compute_seconds
    ):
        why = (
            f"whose {_ms(other.transfer_seconds)} of transfer outweighs its "
            f"{_ms(other.compute_seconds)} of compute"
        )
    else:
        why = (
            f"whose compute takes {_ms(other.compute_seconds)} against {_ms(best.compute_seconds)}"
        )
    return speedup, True, f"run on {best.device}: {speedup:.1f}x faster than {other.device}, {why}"


def _resolve_devices(devices: Sequence[str] | str | None, visible: list[str]) -> list[str]:
    from tfres.backends.tf_placement import short_device_name

    if devices is None:
        return visible
    wanted = [d for d in devices.split(",")] if isinstance(devices, str) else list(devices)
    names: list[str] = []
    for raw in wanted:
        if not str(raw).strip():
            continue
        name = short_device_name(str(raw))
        if name not in visible:
            if name.startswith("GPU") and not any(v.startswith("GPU") for v in visible):
                raise NoGpuError(
                    f"{name} was asked for but TensorFlow sees no GPU here; "
                    "run `tfres doctor` for why"
                )
            raise ValueError(
                f"device {raw!r} is not visible to TensorFlow here (visible: {', '.join(visible)})"
            )
        if name not in names:
            names.append(name)
    if not names:
        raise ValueError(f"no device named in {devices!r}; write them like 'CPU:0,GPU:0'")
    return names


def advise_placement(
    fn: Callable[..., Any],
    *example_args: Any,
    devices: Sequence[str] | str | None = None,
    repeats: int = 10,
    warmup: int = 2,
    logical_cpus: int | None = None,
    placement_log: bool = True,
) -> PlacementAdvice:
    """Time ``fn(*example_args)`` on each device and say where it should run.

    ``devices`` defaults to every logical CPU and GPU TensorFlow sees. Each call is timed in
    three parts (input transfer, compute, output transfer; see
    :func:`tfres.backends.tf_placement.call_once`); ``warmup`` calls per device are dropped,
    then ``repeats`` rounds call each device once in turn (interleaved, so a load that comes
    and goes hits all devices alike) and the medians are compared. ``logical_cpus=2`` first
    splits the CPU into two logical devices (only before the TensorFlow runtime starts). With
    ``placement_log``, the function is also run once as a ``tf.function`` to read where
    each op was placed; a function that cannot be traced keeps its timings and its log says
    why. On a machine without GPU only CPUs are timed; naming a GPU raises
    :class:`~tfres.errors.NoGpuError`.

        advice = tfres.advise_placement(model, x_batch, devices=["CPU:0", "GPU:0"])
        print(advice.verdict)
    """
    if not callable(fn):
        raise ValueError(f"fn must be callable (got {type(fn).__name__})")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a whole number >= 1 (got {repeats!r})")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a whole number >= 0 (got {warmup!r})")
    from tfres.backends import tf_placement as backend

    if logical_cpus is not None:
        backend.ensure_logical_cpus(logical_cpus)
    targets = _resolve_devices(devices, backend.logical_devices())
    parts: dict[str, dict[str, list[float]]] = {
        d: {"transfer_in": [], "compute": [], "transfer_out": []} for d in targets
    }
    errors: dict[str, str] = {}

    def call(device: str, keep: bool) -> None:
        try:
            t_in, t_compute, t_out = backend.call_once(fn, example_args, device)
        except Exception as err:  # the function may have no kernel on one device
            errors[device] = f"{type(err).__name__}: {err}".splitlines()[0][:300]
            return
        if keep:
            parts[device]["transfer_in"].append(t_in)
            parts[device]["compute"].append(t_compute)
            parts[device]["transfer_out"].append(t_out)

    for device in targets:
        for _ in range(warmup):
            if device not in errors:
                call(device, keep=False)
    # interleaved rounds, the order rotated each round: drift and neighbours' load hit
    # every device alike instead of whichever was timed last
    for round_index in range(repeats):
        shift = round_index % len(targets)
        for device in targets[shift:] + targets[:shift]:
            if device not in errors:
                call(device, keep=True)
    timings: list[DeviceTiming] = []
    totals: dict[str, list[float]] = {}
    for device in targets:
        if device in errors:
            timings.append(DeviceTiming(device=device, error=errors[device]))
            continue
        timing, per_call = _timing(device, parts[device])
        timings.append(timing)
        totals[device] = per_call
    ok = [t for t in timings if t.total_seconds is not None]
    if not ok:
        details = "; ".join(f"{t.device}: {t.error}" for t in timings)
        raise TfresError(f"the function failed on every device ({details})")
    ranked = sorted(ok, key=lambda t: t.total_seconds or 0.0)
    speedup, clear, verdict = _verdict(ranked, totals)
    notes = tuple(f"{t.device} failed: {t.error}" for t in timings if t.error)
    logs = tuple(_placement_log(fn, example_args, d) for d in targets) if placement_log else ()
    return PlacementAdvice(
        best_device=ranked[0].device,
        speedup=speedup,
        clear=clear,
        verdict=verdict,
        timings=tuple(timings),
        placements=logs,
        repeats=repeats,
        warmup=warmup,
        notes=notes,
    )
