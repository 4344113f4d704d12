"""From raw readings to a :class:`~tfres.timeline.Sample`: rates over the sampler's clock.

Counters (the tree's CPU seconds, disk and network bytes) become rates by difference over
the clock. The tree's CPU percentage is taken over spans of at least
:data:`~tfres.sampler.interval.CPU_EVERY_SECONDS` (0.1 s), as the host's is
(:class:`tfres.backends.host_now.HostReader`): the kernel counts CPU time in 10 ms clock
ticks, so over one 10 ms sample a process is at 0% or 100% of a core. Samples inside a span
carry the figure of the last full span; at 10 Hz every sample closes a span.

    maker = SampleMaker(cpu_cores=(2.0, "CPU affinity (2 cores)"))
    sample = maker.make(now, t, host_reading, tree_reading, gpus=(), tf_memory=None)
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tfres.backends.proc import HostReading, TreeReading
from tfres.sampler.interval import CPU_EVERY_SECONDS
from tfres.timeline import GpuSample, Sample

__all__ = ["SampleMaker"]

#: ``Sample`` is a frozen dataclass: its ``__init__`` sets 19 fields one by one through
#: ``object.__setattr__`` (~4 us; at 100 Hz, ~1% of a sample's cost). A sample is made by
#: giving a new object its ``__dict__`` at once instead, where that gives the same object:
#: no ``__post_init__`` to run, no ``__slots__``, and every field given by :meth:`make`
#: (tests/sampler check the result equals ``Sample(**fields)``).
_MADE = (
    "t_seconds cpu_percent cpu_per_core_percent memory_used_bytes memory_available_bytes "
    "swap_used_bytes disk_read_bytes_per_second disk_write_bytes_per_second "
    "net_sent_bytes_per_second net_recv_bytes_per_second process_cpu_percent "
    "process_cpu_share_percent process_count process_threads process_rss_bytes "
    "process_uss_bytes process_pss_bytes gpus tf_memory"
).split()
_FILL_DICT = (
    not hasattr(Sample, "__post_init__")
    and hasattr(Sample(0.0), "__dict__")
    and {f.name for f in dataclasses.fields(Sample)} == set(_MADE)
)


def _sample(fields: dict[str, Any]) -> Sample:
    if not _FILL_DICT:
        return Sample(**fields)
    sample = object.__new__(Sample)
    object.__setattr__(sample, "__dict__", fields)  # the dict itself: made for this sample
    return sample


def _rate(before: int | None, after: int | None, seconds: float) -> float | None:
    """Bytes per second between two cumulative counters (None when either is unknown)."""
    if before is None or after is None:
        return None
    return int(max(0.0, (after - before) / seconds) * 10 + 0.5) / 10  # round(x, 1), cheaper


class SampleMaker:
    """Keeps the previous counters and turns each reading into a sample.

    ``cpu_cores`` (cores, source) is the denominator of ``process_cpu_share_percent``;
    None leaves the share None.
    """

    def __init__(
        self,
        cpu_cores: tuple[float, str] | None = None,
        *,
        cpu_every_seconds: float = CPU_EVERY_SECONDS,
    ) -> None:
        self.cpu_cores = cpu_cores
        # 0.95: the beat jitters; a sample 99 ms after the span's start closes a 100 ms span
        self._span_seconds = 0.95 * cpu_every_seconds
        self._span_start: tuple[float, float] | None = None  # (clock, tree CPU seconds)
        self._cpu: tuple[float | None, float | None] = (None, None)  # (percent, share)
        self._prev_io: tuple[float, HostReading] | None = None

    def _tree_cpu(self, now: float, tree: TreeReading) -> tuple[float | None, float | None]:
        """(percent of one core, share of the usable cores) of the tree, carried in a span."""
        start = self._span_start
        if start is None:
            self._span_start = (now, tree.cpu_seconds)
            return self._cpu
        seconds = now - start[0]
        if seconds < self._span_seconds or seconds <= 0:
            return self._cpu
        self._span_start = (now, tree.cpu_seconds)
        # to 0.01 with int(): round(x, 2) formats the float to a string and back
        percent = int(max(0.0, (tree.cpu_seconds - start[1]) / seconds * 10000.0) + 0.5) / 100
        share = None
        cores = self.cpu_cores
        if cores is not None and cores[0] > 0:
            share = int(min(10000.0, percent * 100.0 / cores[0]) + 0.5) / 100
        self._cpu = (percent, share)
        return self._cpu

    def make(
        self,
        now: float,
        t: float,
        host: HostReading,
        tree: TreeReading,
        gpus: tuple[GpuSample, ...],
        tf_memory: dict[str, dict[str, int]] | None,
    ) -> Sample:
        """The sample of readings taken at ``now`` (the clock), ``t`` seconds into the run."""
        pids = tree.pids
        start = self._span_start
        if start is None or now - start[0] >= self._span_seconds:
            proc_cpu, share = self._tree_cpu(now, tree)
        else:  # inside a span (at 100 Hz, 9 samples in 10): the last figures, carried
            proc_cpu, share = self._cpu
        disk_read = disk_write = net_sent = net_recv = None
        if host.io_read:
            prev_io, self._prev_io = self._prev_io, (now, host)
            if prev_io is not None and now > prev_io[0]:
                dt, ph = now - prev_io[0], prev_io[1]
                disk_read = _rate(ph.disk_read_bytes, host.disk_read_bytes, dt)
                disk_write = _rate(ph.disk_write_bytes, host.disk_write_bytes, dt)
                net_sent = _rate(ph.net_sent_bytes, host.net_sent_bytes, dt)
                net_recv = _rate(ph.net_recv_bytes, host.net_recv_bytes, dt)
        alive = bool(pids)
        return _sample(
            {
                "t_seconds": t,
                "cpu_percent": host.cpu_percent,
                "cpu_per_core_percent": host.cpu_per_core_percent,
                "memory_used_bytes": host.memory_used_bytes,
                "memory_available_bytes": host.memory_available_bytes,
                "swap_used_bytes": host.swap_used_bytes,
                "disk_read_bytes_per_second": disk_read,
                "disk_write_bytes_per_second": disk_write,
                "net_sent_bytes_per_second": net_sent,
                "net_recv_bytes_per_second": net_recv,
                "process_cpu_percent": proc_cpu if alive else None,
                "process_cpu_share_percent": share if alive else None,
                "process_count": len(pids),
                "process_threads": tree.threads if alive else None,
                "process_rss_bytes": tree.rss_bytes if alive else None,
                "process_uss_bytes": tree.uss_bytes,
                "process_pss_bytes": tree.pss_bytes,
                "gpus": gpus,
                "tf_memory": tf_memory or {},
            }
        )
