"""``tfres.bench()``: run the standard workloads under the sampler and get one record.

    record = tfres.bench(quick=True)
    for w in record.workloads:
        print(w["name"], w["device"], w["throughput"], w["throughput_unit"])

The record (kind ``"bench"``) holds the machine fingerprint, the timeline with one phase
per workload and device, the workload results (``record.workloads``, see
:mod:`tfres.workloads`) and the diagnosis findings. Run it on two machines and
``tfres compare`` the records to see how each uses its CPU, GPU and memory.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tfres.backends.tf import (
    build_info,
    load_tensorflow,
    tensorflow_distribution,
    tensorflow_installed,
)
from tfres.backends.tf_runtime import gpu_devices
from tfres.errors import NoGpuError
from tfres.machine.fingerprint import fingerprint
from tfres.record import Record
from tfres.sampler.sampler import DEFAULT_INTERVAL_SECONDS, Sampler, check_interval
from tfres.session import RecordSession, SavedRecord
from tfres.workloads import WORKLOADS, Workload, WorkloadContext
from tfres.workloads._context import Span, complete_results, error_text, make_result

__all__ = [
    "DEVICE_CHOICES",
    "BenchProgress",
    "bench",
    "run_bench",
    "resolve_devices",
    "select_workloads",
]

log = logging.getLogger("tfres")

DEVICE_CHOICES = ("cpu", "gpu", "all")

#: ``progress(workload, fraction, message)``: how far ``workload`` is, 0 to 1
BenchProgress = Callable[[str, float, str], None]

TF_MISSING = "TensorFlow is not installed; install with: pip install 'tfres[cpu]'"


def select_workloads(only: Sequence[str] | None = None) -> list[Workload]:
    """The workloads ``bench(only=...)`` runs, in registry order; ValueError on an unknown name."""
    if not only:
        return [w for w in WORKLOADS.values() if w.default]
    unknown = [name for name in only if name not in WORKLOADS]
    if unknown:
        raise ValueError(f"unknown workload {unknown[0]!r}; choose from: {', '.join(WORKLOADS)}")
    return [w for name, w in WORKLOADS.items() if name in only]


def _no_gpu_reason(fingerprint: Mapping[str, Any] | None) -> str:

    reasons = []
    info = build_info() or {}
    if info and not info.get("is_cuda_build", False):
        dist = tensorflow_distribution()
        name = f"{dist[0]} {dist[1]}" if dist else "this TensorFlow"
        reasons.append(f"{name} is a CPU-only build (install 'tfres[gpu]' for CUDA)")
    gpu_reason = (fingerprint or {}).get("gpus_reason")
    if gpu_reason:
        reasons.append(str(gpu_reason))
    if not reasons:
        reasons.append("TensorFlow lists no GPU")
    return "; ".join(reasons)


def resolve_devices(
    device: str = "cpu", *, fingerprint: Mapping[str, Any] | None = None
) -> list[str]:
    """TensorFlow device names for ``device`` (``"cpu"``, ``"gpu"`` or ``"all"``).

    ``"gpu"`` on a machine where TensorFlow sees no GPU raises :class:`NoGpuError` saying
    why; ``"all"`` then is just ``["CPU:0"]``. Imports TensorFlow (not when it is missing).
    """
    if device not in DEVICE_CHOICES:
        raise ValueError(f"device must be one of {', '.join(DEVICE_CHOICES)} (got {device!r})")

    if not tensorflow_installed():
        if device == "gpu":
            raise NoGpuError(
                f"--device gpu needs TensorFlow: {TF_MISSING.replace('; ', ', ')} or 'tfres[gpu]'"
            )
        return ["CPU:0"]
    if device == "cpu":
        return ["CPU:0"]

    gpus = gpu_devices()
    if device == "gpu":
        if not gpus:
            raise NoGpuError(
                f"no GPU for --device gpu: {_no_gpu_reason(fingerprint)}; "
                "run `tfres doctor` for details, or use --device cpu"
            )
        return gpus
    return ["CPU:0", *gpus]


def _failed_result(
    ctx: WorkloadContext, workload: Workload, device: str, error: str, span: Span | None = None
) -> dict[str, Any]:
    span = span or Span(start_seconds=ctx.now(), end_seconds=ctx.now())
    return make_result(
        ctx,
        name=workload.name,
        device=device,
        params={},
        times=[],
        span=span,
        details={"variant": None},
        error=error,
    )


def bench(
    *,
    quick: bool = False,
    only: Sequence[str] | None = None,
    device: str = "cpu",
    label: str | None = None,
    interval: float = DEFAULT_INTERVAL_SECONDS,
    progress: BenchProgress | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    store: bool | str | os.PathLike[str] = True,
) -> Record:
    """Run the standard workloads under the sampler; returns the record (kind ``"bench"``).

    ``only`` names workloads to run (default: all of :data:`tfres.workloads.WORKLOADS`);
    ``device`` is ``"cpu"``, ``"gpu"`` or ``"all"`` (every GPU TensorFlow sees, plus the CPU);
    ``params`` overrides workload parameters, e.g. ``{"cpu_matmul": {"sizes": [500]}}``.
    ``progress(workload, fraction, message)`` is called as each workload advances.
    ``store=True`` saves the record in the local store (a path: that store; False: nowhere);
    a store that cannot be opened raises :class:`~tfres.errors.StoreError` before any work.

    Without TensorFlow, ``cpu_matmul`` still runs and the TensorFlow workloads are listed
    with an error naming ``pip install 'tfres[cpu]'``. ``device="gpu"`` on a machine with
    no usable GPU raises :class:`~tfres.errors.NoGpuError` with the reason.

        record = tfres.bench(quick=True, only=["cpu_matmul"])
        record.workloads[0]["throughput"]  # GFLOP/s
    """
    saved = run_bench(
        quick=quick,
        only=only,
        device=device,
        label=label,
        interval=interval,
        progress=progress,
        params=params,
        store=store,
    )
    if saved.error:
        saved.record.notes.append(f"not saved: {saved.error}")
    return saved.record


def run_bench(
    *,
    quick: bool = False,
    only: Sequence[str] | None = None,
    device: str = "cpu",
    label: str | None = None,
    interval: float = DEFAULT_INTERVAL_SECONDS,
    progress: BenchProgress | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    store: bool | str | os.PathLike[str] = True,
    out: str | os.PathLike[str] | None = None,
) -> SavedRecord:
    """:func:`bench`, saved once: the record with its store number (``tfres bench`` uses it).

    ``out`` also writes the record to a file. Every output is checked before the work
    starts (:meth:`RecordSession.check_outputs`).
    """
    check_interval(interval)
    workloads = select_workloads(only)
    _check_params(workloads, quick, params)
    has_tf = _load_tensorflow(workloads)

    fp = fingerprint(import_tensorflow=False).to_dict()
    devices = resolve_devices(device, fingerprint=fp)
    record = Record(kind="bench", label=label, fingerprint=fp)
    record.extra["bench"] = {
        "quick": quick,
        "device": device,
        "devices": devices,
        "only": list(only) if only else None,
        "params": {k: dict(v) for k, v in (params or {}).items()},
    }
    if device == "all" and devices == ["CPU:0"]:
        record.notes.append(f"--device all: no GPU found ({_no_gpu_reason(fp)}); ran on CPU:0 only")
    sampler = Sampler(interval)
    session = RecordSession(record, sampler, store=store, out=out)
    session.check_outputs()
    session.start()
    try:
        for w in workloads:
            results = _run_one(w, sampler, devices, quick, params, progress, has_tf, record)
            record.workloads.extend(results)
        record.status = "ok"
    except KeyboardInterrupt:
        record.status, record.end_reason = "partial", "interrupted (KeyboardInterrupt)"
        raise
    finally:
        session.finish()
        complete_results(record.workloads, record.samples, sampler.interval)
        saved = session.save()
    return saved


def _check_params(
    workloads: list[Workload], quick: bool, params: Mapping[str, Mapping[str, Any]] | None
) -> None:
    for name in params or {}:
        if name not in WORKLOADS:
            raise ValueError(
                f"params for unknown workload {name!r}; choose from: {', '.join(WORKLOADS)}"
            )
    for w in workloads:  # reject a bad parameter name before anything runs
        w.params(quick=quick, overrides=(params or {}).get(w.name))


def _load_tensorflow(workloads: list[Workload]) -> bool:
    """Import TensorFlow and Keras before the sampler starts; False when they cannot be."""

    has_tf = tensorflow_installed()
    if has_tf and any(w.needs_tensorflow for w in workloads):
        try:
            # both imports before the sampler starts: its thread then never sees a half-done one
            load_tensorflow()
            import keras  # noqa: F401
        except Exception as err:  # a broken install: bench what needs no TF
            log.warning("tfres bench: import tensorflow failed: %s", err)
            has_tf = False
    return has_tf


def _run_one(
    w: Workload,
    sampler: Sampler,
    devices: list[str],
    quick: bool,
    params: Mapping[str, Mapping[str, Any]] | None,
    progress: BenchProgress | None,
    has_tf: bool,
    record: Record,
) -> list[dict[str, Any]]:
    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(w.name, fraction, message)

    ctx = WorkloadContext(
        devices=tuple(devices),
        quick=quick,
        params=dict((params or {}).get(w.name) or {}),
        sampler=sampler,
        progress=report,
        fingerprint=record.fingerprint,
    )
    targets = devices if w.per_device else ["host"]
    if w.needs_tensorflow and not has_tf:
        note = f"{w.name} skipped: {TF_MISSING}"
        record.notes.append(note)
        report(1.0, "skipped: no TensorFlow")
        return [_failed_result(ctx, w, d, f"skipped: {TF_MISSING}") for d in targets]
    report(0.0, "starting")
    with ctx.span() as span:
        try:
            results = w.run(ctx)
        except KeyboardInterrupt:
            raise
        except Exception as err:  # one broken workload must not lose the others
            log.debug("workload %s failed", w.name, exc_info=True)
            results = None
            error = error_text(err)
    if results is None:
        report(1.0, f"failed: {error}")
        return [_failed_result(ctx, w, d, error, span) for d in targets]
    return results
