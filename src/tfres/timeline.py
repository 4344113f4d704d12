"""The data model of a resource timeline: :class:`Sample`, :class:`GpuSample`, :class:`Mark`.

A sample is one reading of the host, the watched process tree, each GPU and the TensorFlow
allocator, taken at ``t_seconds`` after the start of the run (monotonic clock). Units are in
the field names; a value that cannot be read here is ``None``, never 0. Every later feature
(reports, diagnosis, compare, exports) reads samples through these names, documented in
``docs/record-format.md``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

__all__ = ["GpuSample", "Sample", "Mark", "Phase"]


@dataclass(frozen=True)
class GpuSample:
    """One reading of one GPU through NVML; ``None`` where NVML cannot tell."""

    index: int
    util_percent: float | None = None
    memory_util_percent: float | None = None
    memory_used_bytes: int | None = None
    memory_total_bytes: int | None = None
    power_watts: float | None = None
    temperature_celsius: float | None = None
    sm_clock_mhz: int | None = None
    throttle_reasons: tuple[str, ...] = ()
    pcie_rx_bytes_per_second: float | None = None
    pcie_tx_bytes_per_second: float | None = None
    #: share of time the compute engine ran kernels, and share of SMs busy (NVML GPM, Hopper
    #: on; copies do not count, unlike ``util_percent``); None where the GPU has no GPM
    engine_active_percent: float | None = None
    sm_active_percent: float | None = None
    #: GPU memory held by the watched processes; None with ``process_memory_note`` saying why.
    process_memory_used_bytes: int | None = None
    process_memory_note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["throttle_reasons"] = list(self.throttle_reasons)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GpuSample:
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in d.items() if k in known}
        kwargs["throttle_reasons"] = tuple(kwargs.get("throttle_reasons") or ())
        return cls(**kwargs)


@dataclass(frozen=True)
class Sample:
    """One reading of everything the sampler watches, ``t_seconds`` after the start."""

    t_seconds: float
    # -- the whole host (psutil) -------------------------------------------------------
    #: system CPU, 0-100 over all logical cores (the same as the top line of ``top``)
    cpu_percent: float | None = None
    cpu_per_core_percent: tuple[float, ...] = ()
    memory_used_bytes: int | None = None
    memory_available_bytes: int | None = None
    swap_used_bytes: int | None = None
    disk_read_bytes_per_second: float | None = None
    disk_write_bytes_per_second: float | None = None
    net_sent_bytes_per_second: float | None = None
    net_recv_bytes_per_second: float | None = None
    # -- the watched process tree ------------------------------------------------------
    #: CPU of the watched tree where 100 means one core busy (as ``top`` shows a process)
    process_cpu_percent: float | None = None
    #: the same, 0-100 of the CPUs this tree may use (cgroup quota, else affinity cores)
    process_cpu_share_percent: float | None = None
    process_count: int | None = None
    process_threads: int | None = None
    process_rss_bytes: int | None = None
    process_uss_bytes: int | None = None
    process_pss_bytes: int | None = None
    # -- GPUs and the TensorFlow allocator ---------------------------------------------
    gpus: tuple[GpuSample, ...] = ()
    #: TensorFlow allocator per device, e.g. {"CPU:0": {"current_bytes": .., "peak_bytes": ..}}
    tf_memory: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["cpu_per_core_percent"] = list(self.cpu_per_core_percent)
        d["gpus"] = [g.to_dict() for g in self.gpus]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Sample:
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in d.items() if k in known}
        kwargs["cpu_per_core_percent"] = tuple(kwargs.get("cpu_per_core_percent") or ())
        kwargs["gpus"] = tuple(GpuSample.from_dict(g) for g in kwargs.get("gpus") or ())
        kwargs["tf_memory"] = dict(kwargs.get("tf_memory") or {})
        return cls(**kwargs)


@dataclass(frozen=True)
class Mark:
    """A labelled instant on the timeline (``m.mark("epoch 2")``)."""

    t_seconds: float
    label: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Mark:
        return cls(t_seconds=float(d["t_seconds"]), label=str(d["label"]))


@dataclass(frozen=True)
class Phase:
    """A named span of the timeline (a bench workload, a training epoch)."""

    name: str
    start_seconds: float
    end_seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Phase:
        end = d.get("end_seconds")
        return cls(
            name=str(d["name"]),
            start_seconds=float(d["start_seconds"]),
            end_seconds=None if end is None else float(end),
        )
