"""What a workload gets to run with (:class:`WorkloadContext`) and how it reports a result.

A result is a dict with exactly the keys of :data:`RESULT_KEYS`. Times are the timed
repeats only (warm-up excluded); CPU and memory figures come from the sampler's samples
that fall within the result's :class:`Span` on the timeline.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from tfres.sampler.sampler import Sampler
    from tfres.timeline import Sample

__all__ = [
    "epoch_timer",
    "RESULT_KEYS",
    "ProgressCallback",
    "complete_results",
    "covering_samples",
    "sample_figures",
    "Span",
    "Workload",
    "WorkloadContext",
    "error_text",
    "failure_text",
    "tf_failures",
    "make_result",
    "median",
]

#: The keys of one workload result, in this order (the record's ``workloads`` entries).
RESULT_KEYS = (
    "name",
    "device",
    "params",
    "repeats",
    "seconds_median",
    "seconds_min",
    "seconds_max",
    "throughput",
    "throughput_unit",
    "cpu_percent_mean",
    "process_cpu_percent_mean",
    "gpu_util_percent_mean",
    "peak_rss_bytes",
    "peak_tf_memory_bytes",
    "start_seconds",
    "end_seconds",
    "details",
    "error",
)

#: ``progress(fraction, message)``: fraction of this workload done, 0 to 1, and what runs now
ProgressCallback = Callable[[float, str], None]


def epoch_timer(keras: Any, times: list[float]) -> Any:
    """A Keras callback that appends each epoch's seconds to ``times``; epoch 0, the
    warm-up (tracing, first allocations), is left out."""

    class EpochTimer(keras.callbacks.Callback):  # type: ignore[misc]
        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            self._t = time.perf_counter()

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            if epoch > 0:
                times.append(time.perf_counter() - self._t)

    return EpochTimer()


def median(values: Sequence[float]) -> float | None:
    """The median of ``values``; None when there are none."""
    return float(statistics.median(values)) if values else None


@dataclass
class Span:
    """A stretch of the timeline: sampler seconds and this process's CPU seconds at each end."""

    start_seconds: float
    end_seconds: float | None = None
    cpu_start_seconds: float = 0.0
    cpu_end_seconds: float | None = None

    @property
    def wall_seconds(self) -> float | None:
        return None if self.end_seconds is None else self.end_seconds - self.start_seconds

    @property
    def process_cpu_percent(self) -> float | None:
        """CPU of this process over the span, where 100 means one core busy."""
        wall = self.wall_seconds
        if wall is None or wall <= 0 or self.cpu_end_seconds is None:
            return None
        return max(0.0, (self.cpu_end_seconds - self.cpu_start_seconds) / wall * 100.0)


@dataclass
class WorkloadContext:
    """Everything a workload run needs, given by :func:`tfres.benchmark` (or a test).

    ``devices`` are TensorFlow device names (``"CPU:0"``, ``"GPU:0"``); ``params`` override
    the workload's own quick or full parameters key by key. Without a ``sampler``,
    results still have their times; the figures read from samples are None.
    """

    devices: tuple[str, ...] = ("CPU:0",)
    quick: bool = False
    params: Mapping[str, Any] = field(default_factory=dict)
    sampler: Sampler | None = None
    progress: ProgressCallback | None = None
    seed: int = 0
    #: the machine fingerprint as a dict (``fingerprint().to_dict()``), if already taken
    fingerprint: Mapping[str, Any] | None = None
    _t0: float = field(default_factory=time.perf_counter, repr=False)

    def now(self) -> float:
        """Seconds on the sampler's timeline (or since this context was made, without one)."""
        if self.sampler is not None:
            return self.sampler.elapsed()
        return time.perf_counter() - self._t0

    def phase(self, name: str) -> Any:
        """A named span of the timeline, shaded in reports (``ctx.phase("tf_matmul CPU:0")``)."""
        return self.sampler.phase(name) if self.sampler is not None else nullcontext()

    @contextmanager
    def span(self) -> Iterator[Span]:
        """Measure a stretch of work: ``with ctx.span() as s: ...``; ``s`` goes to make_result."""
        s = Span(start_seconds=self.now(), cpu_start_seconds=time.process_time())
        try:
            yield s
        finally:
            s.cpu_end_seconds = time.process_time()
            s.end_seconds = self.now()

    def report(self, fraction: float, message: str) -> None:
        """Tell the progress bar how far this workload is (0 to 1) and what runs now."""
        if self.progress is not None:
            self.progress(min(1.0, max(0.0, float(fraction))), message)

    def rng(self, offset: int = 0) -> np.random.Generator:
        """A seeded NumPy generator for random (never all-zero) inputs."""
        import numpy as np

        return np.random.default_rng(self.seed + offset)

    def samples_in(self, span: Span) -> list[Sample]:
        """The samples taken so far that cover ``span`` (see :func:`covering_samples`)."""
        if self.sampler is None or span.end_seconds is None:
            return []
        return covering_samples(
            self.sampler.samples, span.start_seconds, span.end_seconds, self.sampler.interval
        )


@dataclass(frozen=True)
class Workload:
    """A standard workload: what it is, its parameters, and how to run it.

    ``quick_params`` and ``full_params`` are the parameters of ``tfres bench --quick`` and
    of the full suite; ``WorkloadContext.params`` overrides them key by key. ``per_device``
    workloads run on each TensorFlow device the user selected (``ctx.devices``); the others
    run once on the host (``device == "host"``). ``default`` workloads run when
    ``tfres bench`` is given no ``--only``.
    """

    name: str
    description: str
    run: Callable[[WorkloadContext], list[dict[str, Any]]]
    needs_tensorflow: bool = True
    per_device: bool = True
    default: bool = True
    quick_params: Mapping[str, Any] = field(default_factory=dict)
    full_params: Mapping[str, Any] = field(default_factory=dict)

    def params(self, *, quick: bool, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The parameters for a quick or full run, with ``overrides`` applied."""
        merged = dict(self.quick_params if quick else self.full_params)
        for key, value in (overrides or {}).items():
            if key not in self.full_params and key not in self.quick_params:
                known = ", ".join(sorted(self.full_params)) or "none"
                raise ValueError(
                    f"workload {self.name} has no parameter {key!r}; its parameters are: {known}"
                )
            merged[key] = value
        return merged


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def _gpu_index(device: str) -> int | None:
    kind, _, index = device.upper().rpartition(":")
    if kind.endswith("GPU") and index.isdigit():
        return int(index)
    return None


def covering_samples(
    samples: Sequence[Sample], start: float, end: float, interval: float
) -> list[Sample]:
    """The samples that cover ``start..end``: a sample at ``t`` covers the interval before it.

    For a span shorter than the interval that is the first sample after it, if taken yet.
    """
    inside = [s for s in samples if start < s.t_seconds <= end + interval]
    if not inside:
        inside = [s for s in samples if s.t_seconds > start][:1]
    return inside


def sample_figures(samples: Sequence[Sample], device: str) -> dict[str, Any]:
    """The result fields read from samples: machine CPU, peak RSS, GPU use, TF in use."""
    rss = [s.process_rss_bytes for s in samples if s.process_rss_bytes is not None]
    gpu_index = _gpu_index(device)
    gpu_util: float | None = None
    if gpu_index is not None:
        gpu_util = _mean([g.util_percent for s in samples for g in s.gpus if g.index == gpu_index])
    # the allocator's own peak counts from its last reset, maybe long before this span:
    # the most the samples saw in use within the span is the honest figure
    in_use = [(s.tf_memory.get(device) or {}).get("current_bytes") for s in samples]
    known = [int(v) for v in in_use if v is not None]
    return {
        "cpu_percent_mean": _mean([s.cpu_percent for s in samples]),
        "process_cpu_percent_mean": _mean([s.process_cpu_percent for s in samples]),
        "gpu_util_percent_mean": gpu_util,
        "peak_rss_bytes": max(rss) if rss else None,
        "peak_tf_memory_bytes": max(known) if known else None,
    }


def complete_results(
    results: Sequence[dict[str, Any]], samples: Sequence[Sample], interval: float
) -> None:
    """Read the sample figures of finished results again, now that every sample is in.

    A result made at the end of its span has not seen the sample that closes the span
    yet; this fills each sample-based field from all the covering samples. Figures a
    workload measured itself (its process CPU, the allocator's peak) are kept.
    """
    for r in results:
        start, end = r.get("start_seconds"), r.get("end_seconds")
        if start is None or end is None:
            continue
        figures = sample_figures(covering_samples(samples, start, end, interval), str(r["device"]))
        for key in ("cpu_percent_mean", "gpu_util_percent_mean", "peak_rss_bytes"):
            if figures[key] is not None:
                r[key] = figures[key]
        for key in ("process_cpu_percent_mean", "peak_tf_memory_bytes"):
            if r.get(key) is None:
                r[key] = figures[key]


def make_result(
    ctx: WorkloadContext,
    *,
    name: str,
    device: str,
    params: Mapping[str, Any],
    times: Sequence[float],
    span: Span,
    throughput: float | None = None,
    throughput_unit: str | None = None,
    peak_tf_memory_bytes: int | None = None,
    details: Mapping[str, Any] | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    """One workload result with the keys of :data:`RESULT_KEYS`.

    ``times`` are the timed repeats in seconds (warm-up excluded). System CPU, peak RSS and
    GPU utilization come from the samples within ``span``, and so does the TensorFlow
    allocator's peak unless the workload read it itself (``peak_tf_memory_bytes``). The
    process CPU is this process's CPU time over the span (exact, even for spans shorter than
    a sample interval), else the samples' figure. A figure that cannot be read is None.
    """
    figures = sample_figures(ctx.samples_in(span), device)
    process_cpu = span.process_cpu_percent
    if process_cpu is None:
        process_cpu = figures["process_cpu_percent_mean"]
    if peak_tf_memory_bytes is None:
        peak_tf_memory_bytes = figures["peak_tf_memory_bytes"]
    med = median(times)
    result: dict[str, Any] = {
        "name": name,
        "device": device,
        "params": dict(params),
        "repeats": len(times),
        "seconds_median": med,
        "seconds_min": float(min(times)) if times else None,
        "seconds_max": float(max(times)) if times else None,
        "throughput": None if throughput is None else float(throughput),
        "throughput_unit": throughput_unit,
        "cpu_percent_mean": figures["cpu_percent_mean"],
        "process_cpu_percent_mean": process_cpu,
        "gpu_util_percent_mean": figures["gpu_util_percent_mean"],
        "peak_rss_bytes": figures["peak_rss_bytes"],
        "peak_tf_memory_bytes": peak_tf_memory_bytes,
        "start_seconds": round(span.start_seconds, 6),
        "end_seconds": None if span.end_seconds is None else round(span.end_seconds, 6),
        "details": dict(details or {}),
        "error": error,
    }
    return result


def error_text(err: BaseException) -> str:
    """An exception as one short line for a result's ``error``."""
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    text = text if len(text) <= 300 else text[:297] + "..."
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def tf_failures(tf: Any) -> tuple[type[BaseException], ...]:
    """What a TensorFlow workload reports in its result row instead of raising: TensorFlow's
    op errors (out of memory among them), host ``MemoryError``, and the ``RuntimeError`` or
    ``ValueError`` a device or shape the build cannot run raises."""
    return (tf.errors.OpError, MemoryError, RuntimeError, ValueError)


def failure_text(tf: Any, err: BaseException, at: str = "") -> str:
    """``err`` as a result's ``error``; out of memory (device or host) says so first,
    ``at`` naming where (``" at n=4096"``)."""
    if isinstance(err, (tf.errors.ResourceExhaustedError, MemoryError)):
        return f"out of memory{at}: {error_text(err)}"
    return error_text(err)
