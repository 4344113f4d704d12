"""tfres samples as MLflow system metrics, under the names MLflow's own charts show.

MLflow's system-metrics monitor (``mlflow.system_metrics``) logs
``system/cpu_utilization_percentage``, ``system/system_memory_usage_megabytes``,
``system/gpu_0_utilization_percentage`` and so on, every 10 s. tfres logs the same names at
its own interval, so the run's "System metrics" charts fill in, plus a few of its own
(``system/process_*``) for the watched processes:

    stream = MetricStream()
    stream.metrics(sample, wall_seconds=time.time())   # [(key, value, timestamp_ms, step)]

Long runs stay bounded: every sample is kept up to ``max_points`` per metric; after that,
one sample in 2, then in 4 ... (each doubling of the run adds ``max_points / 2`` points).
A value that could not be read is left out, never logged as 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from tfres.timeline import GpuSample, Sample

__all__ = [
    "PREFIX",
    "MetricPoint",
    "MetricStream",
    "DEFAULT_MAX_POINTS",
    "sample_values",
    "record_points",
]

PREFIX = "system/"
#: full resolution for the first hour at 10 Hz
DEFAULT_MAX_POINTS = 36_000

MetricPoint = tuple[str, float, int, int]  # key, value, timestamp in ms, step

_MB = 1e6  # MLflow's own monitor divides bytes by 1e6 for "megabytes"


def _host(s: Sample) -> dict[str, float | None]:
    used, available = s.memory_used_bytes, s.memory_available_bytes
    percent = None
    if used is not None and available is not None and used + available > 0:
        percent = 100.0 * used / (used + available)
    return {
        "cpu_utilization_percentage": s.cpu_percent,
        "system_memory_usage_megabytes": None if used is None else used / _MB,
        "system_memory_usage_percentage": percent,
        # tfres's own: the watched processes
        "process_cpu_utilization_percentage": s.process_cpu_share_percent,
        "process_cpu_cores": None if s.process_cpu_percent is None else s.process_cpu_percent / 100,
        "process_memory_rss_megabytes": (
            None if s.process_rss_bytes is None else s.process_rss_bytes / _MB
        ),
        "process_threads": None if s.process_threads is None else float(s.process_threads),
    }


def _gpu(g: GpuSample) -> dict[str, float | None]:
    i = g.index
    used, total = g.memory_used_bytes, g.memory_total_bytes
    return {
        f"gpu_{i}_utilization_percentage": g.util_percent,
        f"gpu_{i}_memory_usage_megabytes": None if used is None else used / _MB,
        f"gpu_{i}_memory_usage_percentage": (
            None if used is None or not total else 100.0 * used / total
        ),
        f"gpu_{i}_power_usage_watts": g.power_watts,
        f"gpu_{i}_temperature_celsius": g.temperature_celsius,
    }


def sample_values(sample: Sample) -> dict[str, float]:
    """The metrics of one sample, without the ``system/`` prefix, None values left out."""
    values = _host(sample)
    for g in sample.gpus:
        values.update(_gpu(g))
    return {k: float(v) for k, v in values.items() if v is not None}


@dataclass
class MetricStream:
    """Turns successive samples into MLflow metric points, bounded by ``max_points``.

    Network traffic is logged as MLflow's monitor does: megabytes received/sent since the
    run started (``system/network_receive_megabytes``), summed from tfres's rates.
    """

    max_points: int = DEFAULT_MAX_POINTS
    seen: int = 0
    logged: int = 0
    _prev_t: float | None = None
    _rx_bytes: float = 0.0
    _tx_bytes: float = 0.0
    _have_net: bool = False

    def stride(self) -> int:
        """Log one sample in ``stride()``: 1 up to ``max_points`` samples, then 2, 4, 8 ..."""
        stride, limit = 1, self.max_points
        while self.seen >= limit:
            stride *= 2
            limit *= 2
        return stride

    def metrics(self, sample: Sample, *, wall_seconds: float) -> list[MetricPoint]:
        """Points for ``sample`` taken at ``wall_seconds`` (Unix time); [] when skipped."""
        self._add_network(sample)
        step = self.seen
        keep = step % self.stride() == 0
        self.seen += 1
        if not keep:
            return []
        values = sample_values(sample)
        if self._have_net:
            values["network_receive_megabytes"] = self._rx_bytes / _MB
            values["network_transmit_megabytes"] = self._tx_bytes / _MB
        self.logged += 1
        ts = int(wall_seconds * 1000)
        return [(PREFIX + k, v, ts, step) for k, v in values.items()]

    def _add_network(self, s: Sample) -> None:
        if self._prev_t is not None and s.t_seconds > self._prev_t:
            dt = s.t_seconds - self._prev_t
            if s.net_recv_bytes_per_second is not None:
                self._rx_bytes += s.net_recv_bytes_per_second * dt
                self._have_net = True
            if s.net_sent_bytes_per_second is not None:
                self._tx_bytes += s.net_sent_bytes_per_second * dt
                self._have_net = True
        self._prev_t = s.t_seconds


def record_points(
    samples: list[Sample],
    start_wall_seconds: float,
    *,
    max_points: int = DEFAULT_MAX_POINTS,
) -> list[MetricPoint]:
    """The points of a finished record's samples (``tfres push``), on its wall clock."""
    stream = MetricStream(max_points=max_points)
    points: list[MetricPoint] = []
    for s in samples:
        points.extend(stream.metrics(s, wall_seconds=start_wall_seconds + s.t_seconds))
    return points
