"""What each side of a comparison did: resource :class:`Pattern` s and the :class:`WorkloadDiff`
that puts a workload (or the whole run) of record A beside the same one of record B.

Ratios are B over A: a ``time_ratio`` of 2.0 means B took twice as long.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from tfres.diagnosis.facts import RunFacts, background_cores, mean, percentile, samples_between

__all__ = ["LARGE_RATIO", "Pattern", "WorkloadDiff", "pattern"]

#: A time, throughput or memory ratio beyond 1.25x (either way) is explained; below it,
#: run-to-run noise on a shared machine is of the same size (see docs/benchmarks/diagnosis.md).
LARGE_RATIO = 1.25


@dataclass(frozen=True)
class Pattern:
    """How one side used the machine during a workload or run; None where not recorded."""

    seconds: float | None = None
    throughput: float | None = None
    process_cpu_mean_percent: float | None = None
    process_cpu_p95_percent: float | None = None
    system_cpu_mean_percent: float | None = None
    background_cores: float | None = None
    gpu_util_mean_percent: float | None = None
    peak_memory_bytes: int | None = None
    span: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["span"] = list(self.span) if self.span else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Pattern:
        kwargs = {f.name: d.get(f.name) for f in fields(cls)}
        kwargs["span"] = tuple(d["span"]) if d.get("span") else None
        return cls(**kwargs)


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or a <= 0 or b <= 0:
        return None
    return b / a


@dataclass(frozen=True)
class WorkloadDiff:
    """One workload (or the whole run, ``name == "run"``) on both sides."""

    name: str
    device: str
    params: dict[str, Any]
    throughput_unit: str | None
    a: Pattern
    b: Pattern
    note: str | None = None

    @property
    def time_ratio(self) -> float | None:
        """B's time over A's: 2.0 means B took twice as long."""
        return _ratio(self.a.seconds, self.b.seconds)

    @property
    def throughput_ratio(self) -> float | None:
        """B's throughput over A's: 0.5 means B did half the work per second."""
        return _ratio(self.a.throughput, self.b.throughput)

    @property
    def memory_ratio(self) -> float | None:
        return _ratio(self.a.peak_memory_bytes, self.b.peak_memory_bytes)

    @property
    def title(self) -> str:
        variant = self.params.get("variant") or ", ".join(
            f"{k}={v}" for k, v in self.params.items() if k != "variant"
        )
        return f"{self.name} {variant}".strip()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "device": self.device,
            "params": self.params,
            "throughput_unit": self.throughput_unit,
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "time_ratio": self.time_ratio,
            "throughput_ratio": self.throughput_ratio,
            "memory_ratio": self.memory_ratio,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WorkloadDiff:
        return cls(
            name=d["name"],
            device=d["device"],
            params=dict(d.get("params") or {}),
            throughput_unit=d.get("throughput_unit"),
            a=Pattern.from_dict(d["a"]),
            b=Pattern.from_dict(d["b"]),
            note=d.get("note"),
        )


def pattern(
    facts: RunFacts,
    span: tuple[float, float] | None,
    *,
    seconds: float | None = None,
    throughput: float | None = None,
    fallback: dict[str, Any] | None = None,
) -> Pattern:
    """Resource figures of ``facts.record`` over ``span`` (the whole timeline if None)."""
    samples = facts.record.samples
    inside = samples_between(samples, *span) if span else list(samples)
    fb = fallback or {}
    cpu = [s.process_cpu_percent for s in inside]
    gpu = [g.util_percent for s in inside for g in s.gpus]
    rss = [s.process_rss_bytes for s in inside if s.process_rss_bytes]
    peak = max(rss) if rss else fb.get("peak_rss_bytes")
    return Pattern(
        seconds=seconds,
        throughput=throughput,
        process_cpu_mean_percent=mean(cpu)
        if mean(cpu) is not None
        else fb.get("process_cpu_percent_mean"),
        process_cpu_p95_percent=percentile(cpu, 95),
        system_cpu_mean_percent=mean(s.cpu_percent for s in inside) or fb.get("cpu_percent_mean"),
        background_cores=mean(
            background_cores(s, facts.logical_cores, facts.affinity) for s in inside
        ),
        gpu_util_mean_percent=mean(gpu) if gpu else fb.get("gpu_util_percent_mean"),
        peak_memory_bytes=peak,
        span=span,
    )
