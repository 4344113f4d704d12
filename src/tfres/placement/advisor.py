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
from typing import Any

from tfres.backends import tf_placement as backend
from tfres.backends.tf_placement import PLUMBING_OPS, placed_ops, short_device_name
from tfres.errors import NoGpuError, TfresError
from tfres.placement.advice import (
    CLEAR_RATIO,
    DeviceTiming,
    OpPlacement,
    PlacementAdvice,
    PlacementLog,
)
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


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return format_seconds(seconds)


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
    _check_arguments(fn, repeats, warmup)
    if logical_cpus is not None:
        backend.ensure_logical_cpus(logical_cpus)
    targets = _resolve_devices(devices, backend.logical_devices())
    parts, errors = _time_devices(fn, example_args, targets, repeats=repeats, warmup=warmup)
    timings, totals = _device_timings(targets, parts, errors)
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


def _check_arguments(fn: Callable[..., Any], repeats: int, warmup: int) -> None:
    if not callable(fn):
        raise ValueError(f"fn must be callable (got {type(fn).__name__})")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a whole number >= 1 (got {repeats!r})")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a whole number >= 0 (got {warmup!r})")


#: per device, the seconds of each kept call's parts: transfer_in, compute, transfer_out
_Parts = dict[str, dict[str, list[float]]]


def _time_devices(
    fn: Callable[..., Any], args: Sequence[Any], targets: list[str], *, repeats: int, warmup: int
) -> tuple[_Parts, dict[str, str]]:
    """``warmup`` dropped calls per device, then ``repeats`` interleaved rounds of kept ones.

    Returns the parts of the kept calls and, per device whose call raised, the first line
    of the error (that device is not called again).
    """
    parts: _Parts = {d: {"transfer_in": [], "compute": [], "transfer_out": []} for d in targets}
    errors: dict[str, str] = {}

    def call(device: str, keep: bool) -> None:
        try:
            t_in, t_compute, t_out = backend.call_once(fn, args, device)
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
    return parts, errors


def _device_timings(
    targets: list[str], parts: _Parts, errors: dict[str, str]
) -> tuple[list[DeviceTiming], dict[str, list[float]]]:
    """One :class:`DeviceTiming` per device (its error when it failed) and each one's totals."""
    timings: list[DeviceTiming] = []
    totals: dict[str, list[float]] = {}
    for device in targets:
        if device in errors:
            timings.append(DeviceTiming(device=device, error=errors[device]))
            continue
        timing, per_call = _timing(device, parts[device])
        timings.append(timing)
        totals[device] = per_call
    return timings, totals
