"""Live readings of the whole host and of one process tree, through psutil.

Processes come and go while a training runs (data-loader workers, compilers): one that
vanishes or cannot be read mid-sample is skipped, never an error.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import psutil

__all__ = ["HostReading", "TreeReading", "read_host", "ProcessTree"]


@dataclass(frozen=True)
class HostReading:
    cpu_percent: float | None
    cpu_per_core_percent: tuple[float, ...]
    memory_used_bytes: int | None
    memory_available_bytes: int | None
    swap_used_bytes: int | None
    disk_read_bytes: int | None
    disk_write_bytes: int | None
    net_sent_bytes: int | None
    net_recv_bytes: int | None


def read_host() -> HostReading:
    """One reading of the host. CPU percentages are since the previous call (psutil's rule)."""
    per_core = psutil.cpu_percent(percpu=True)
    total = sum(per_core) / len(per_core) if per_core else None
    vm = psutil.virtual_memory()
    try:
        swap_used: int | None = psutil.swap_memory().used
    except (OSError, RuntimeError):
        swap_used = None
    try:
        disk = psutil.disk_io_counters()
    except (OSError, RuntimeError):
        disk = None
    try:
        net = psutil.net_io_counters()
    except (OSError, RuntimeError):
        net = None
    return HostReading(
        cpu_percent=total,
        cpu_per_core_percent=tuple(per_core),
        memory_used_bytes=vm.total - vm.available,
        memory_available_bytes=vm.available,
        swap_used_bytes=swap_used,
        disk_read_bytes=disk.read_bytes if disk else None,
        disk_write_bytes=disk.write_bytes if disk else None,
        net_sent_bytes=net.bytes_sent if net else None,
        net_recv_bytes=net.bytes_recv if net else None,
    )


@dataclass(frozen=True)
class TreeReading:
    """Totals over a process tree at one instant; CPU is cumulative seconds (user+system)."""

    pids: tuple[int, ...]
    cpu_seconds: float
    threads: int
    rss_bytes: int
    uss_bytes: int | None
    pss_bytes: int | None


class ProcessTree:
    """The process ``pid`` and (with ``children=True``) all its descendants.

    ``Process`` objects are cached between readings so psutil can reuse what it knows;
    CPU seconds of children that have exited are kept so the tree's CPU never goes back.
    ``full_memory`` reads USS/PSS (``memory_full_info``): more exact, and costlier.
    """

    def __init__(self, pid: int | None = None, *, children: bool = True, full_memory: bool = False) -> None:
        self.pid = os.getpid() if pid is None else pid
        self.children = children
        self.full_memory = full_memory
        self._root = psutil.Process(self.pid)
        self._procs: dict[int, psutil.Process] = {self.pid: self._root}
        self._last_cpu: dict[int, float] = {}
        self._gone_cpu_seconds = 0.0

    def pids(self) -> list[int]:
        return list(self._procs)

    def _refresh(self) -> None:
        if not self.children:
            return
        try:
            kids = self._root.children(recursive=True)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            kids = []
        alive = {self.pid: self._root}
        for kid in kids:
            alive[kid.pid] = self._procs.get(kid.pid, kid)
        for pid in set(self._procs) - set(alive):
            self._gone_cpu_seconds += self._last_cpu.pop(pid, 0.0)
        self._procs = alive

    def read(self) -> TreeReading:
        self._refresh()
        cpu = threads = rss = 0
        uss: int | None = 0 if self.full_memory else None
        pss: int | None = 0 if self.full_memory else None
        seen: list[int] = []
        for pid, proc in list(self._procs.items()):
            try:
                with proc.oneshot():
                    times = proc.cpu_times()
                    proc_cpu = times.user + times.system
                    n_threads = proc.num_threads()
                    if self.full_memory:
                        full = proc.memory_full_info()
                        proc_rss = full.rss
                        if uss is not None:
                            uss += full.uss
                        if pss is not None:
                            pss = pss + full.pss if hasattr(full, "pss") else None
                    else:
                        proc_rss = proc.memory_info().rss
            except (psutil.NoSuchProcess, psutil.ZombieProcess):
                continue
            except (psutil.AccessDenied, OSError):
                continue
            self._last_cpu[pid] = proc_cpu
            cpu += proc_cpu
            threads += n_threads
            rss += proc_rss
            seen.append(pid)
        return TreeReading(
            pids=tuple(seen),
            cpu_seconds=cpu + self._gone_cpu_seconds,
            threads=threads,
            rss_bytes=rss,
            uss_bytes=uss,
            pss_bytes=pss,
        )


def cpu_seconds_of_this_thread() -> Callable[[], float]:
    """A clock of this thread's own CPU time (used to measure the sampler's cost)."""
    return time.thread_time
