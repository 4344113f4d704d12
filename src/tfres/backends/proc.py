"""Live readings of one process tree (and, re-exported from :mod:`tfres.backends.host_now`,
of the whole host).

Processes come and go while a training runs (data-loader workers, compilers): one that
vanishes or cannot be read mid-sample is skipped, never an error. Costs measured on Linux
(psutil 7, a loaded 2-core VM; docs/timeline-storage.md): one process's CPU, threads and RSS
from one ``/proc/PID/stat`` read ~20 us (psutil's ``oneshot()`` reads three files, ~50 us);
USS/PSS (``memory_full_info()``, ``/proc/PID/smaps_rollup``) ~0.2 ms for a small process and
~3 ms with TensorFlow loaded; the scan for descendants (``children(recursive=True)``, which
reads every ``/proc/PID/stat`` of the host) ~0.8 ms. So the costly two are spaced out by
their own cost.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from tfres.backends.host_now import HostReader, HostReading, read_host

__all__ = [
    "signal_tree",
    "HostReading",
    "HostReader",
    "TreeReading",
    "read_host",
    "ProcessTree",
    "usable_cpu_cores",
    "swap_total_bytes",
    "cpu_seconds_of_this_thread",
]

log = logging.getLogger("tfres")


#: the descendants scan may take at most this share of one core (it is spaced out if slow)
SCAN_CPU_SHARE = 0.002
#: ... but new processes are looked for at least this often, however slow the scan
MAX_RESCAN_SECONDS = 3.0
#: USS/PSS readings may take at most this share of one core
FULL_MEMORY_CPU_SHARE = 0.001


@dataclass(frozen=True)
class TreeReading:
    """Totals over a process tree at one instant; CPU is cumulative seconds (user+system).

    ``uss_bytes``/``pss_bytes`` are None on readings that skip them (see
    :class:`ProcessTree`'s ``full_memory_every``) and where the OS cannot tell.
    """

    pids: tuple[int, ...]
    cpu_seconds: float
    threads: int
    rss_bytes: int
    uss_bytes: int | None
    pss_bytes: int | None


class ProcessTree:
    """The process ``pid`` and (with ``children=True``) all its descendants.

    ``Process`` objects are cached between readings so psutil can reuse what it knows; CPU
    seconds of descendants that have exited are kept, so the tree's CPU never goes back.
    Descendants are looked for every ``rescan_seconds`` (and whenever one exits): a new
    worker process shows up within that time. USS and PSS (``memory_full_info``, ~5x the cost
    of RSS, ~3 ms for a process with TensorFlow loaded) are read every ``full_memory_seconds``
    or, with ``full_memory_every=N``, on every Nth reading (0 never, 1 always). Both costly
    reads are spaced further apart when they are slow, so that the scan takes at most 0.2% of
    a core and USS/PSS at most 0.1% (:data:`SCAN_CPU_SHARE`, :data:`FULL_MEMORY_CPU_SHARE`).
    A root process that is gone or not ours gives readings with no pids.
    """

    def __init__(
        self,
        pid: int | None = None,
        *,
        children: bool = True,
        full_memory: bool = False,
        full_memory_every: int | None = None,
        full_memory_seconds: float | None = None,
        rescan_seconds: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pid = os.getpid() if pid is None else int(pid)
        self.children = children
        if full_memory_every is None:
            full_memory_every = 1 if full_memory else 0
        self.full_memory_every = max(0, int(full_memory_every))
        self.full_memory_seconds = full_memory_seconds
        self.rescan_seconds = rescan_seconds
        self._clock = clock
        self._scan_cost = 0.0
        self._full_cost = 0.0
        self._last_full: float | None = None
        try:
            self._root: psutil.Process | None = psutil.Process(self.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            self._root = None
        self._procs: dict[int, psutil.Process] = {self.pid: self._root} if self._root else {}
        self._last_cpu: dict[int, float] = {}
        self._gone_cpu_seconds = 0.0
        self._dead: set[psutil.Process] = set()
        self._last_scan: float | None = None
        self._readings = 0

    def pids(self) -> list[int]:
        """The pids of the tree as of the last reading."""
        return list(self._procs)

    def _bury(self, pid: int, final_cpu: float | None = None) -> None:
        """``pid`` has exited: keep its CPU seconds, never read it again."""
        last = self._last_cpu.pop(pid, 0.0)
        self._gone_cpu_seconds += last if final_cpu is None else max(last, final_cpu)
        proc = self._procs.pop(pid, None)
        if proc is not None:
            self._dead.add(proc)

    def _rescan(self) -> None:
        now = self._clock()
        self._last_scan = now
        root = self._root
        if root is None or root in self._dead or not self.children:
            return
        started = time.thread_time()
        try:
            kids = root.children(recursive=True)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
            kids = []
        self._scan_cost = time.thread_time() - started
        alive: dict[int, psutil.Process] = {self.pid: root}
        listed = set(kids)
        self._dead = {p for p in self._dead if p in listed}  # reaped ones are gone for good
        for kid in kids:
            if kid in self._dead:
                continue
            cached = self._procs.get(kid.pid)
            if cached is not None and cached != kid:  # the pid was reused by a new process
                self._bury(kid.pid)
                cached = None
            alive[kid.pid] = cached or kid
        for pid in set(self._procs) - set(alive):
            self._bury(pid)
        self._procs = alive

    def read(self) -> TreeReading:
        """One reading of the tree; processes that vanish or deny access are skipped."""
        now = self._clock()
        scan_every = max(
            self.rescan_seconds, min(MAX_RESCAN_SECONDS, self._scan_cost / SCAN_CPU_SHARE)
        )
        if self._last_scan is None or now - self._last_scan >= scan_every:
            self._rescan()
        self._readings += 1
        if self.full_memory_seconds is not None:
            full_every = max(self.full_memory_seconds, self._full_cost / FULL_MEMORY_CPU_SHARE)
            full = self._last_full is None or now - self._last_full >= full_every
        else:
            every = self.full_memory_every
            full = every > 0 and (self._readings - 1) % every == 0
        if full:
            self._last_full = now
            started = time.thread_time()
        cpu = 0.0
        threads = rss = 0
        uss: int | None = 0 if full else None
        pss: int | None = 0 if full else None
        seen: list[int] = []
        for pid, proc in list(self._procs.items()):
            try:
                state, proc_cpu, n_threads, proc_rss = _process_stat(pid, proc)
                if state == "Z":  # exited, not yet reaped
                    self._bury(pid, proc_cpu)
                    self._last_scan = None
                    continue
                if full:
                    mem = proc.memory_full_info()
                    if uss is not None:
                        uss += mem.uss
                    if pss is not None:
                        pss = pss + mem.pss if hasattr(mem, "pss") else None
            except (psutil.NoSuchProcess, psutil.ZombieProcess, ProcessLookupError):
                self._bury(pid)
                self._last_scan = None  # look for the tree again next time
                continue
            except (psutil.AccessDenied, OSError):
                if full:  # smaps may be unreadable (another user) while the rest is not
                    uss = pss = None
                continue
            self._last_cpu[pid] = proc_cpu
            cpu += proc_cpu
            threads += n_threads
            rss += proc_rss
            seen.append(pid)
        if full:
            self._full_cost = time.thread_time() - started
        return TreeReading(
            pids=tuple(seen),
            cpu_seconds=cpu + self._gone_cpu_seconds,
            threads=threads,
            rss_bytes=rss,
            uss_bytes=uss if seen else None,
            pss_bytes=pss if seen else None,
        )


_PROC_STAT = os.path.exists("/proc/self/stat")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _process_stat(pid: int, proc: psutil.Process) -> tuple[str, float, int, int]:
    """(state, user+system CPU seconds, threads, RSS bytes) of one process.

    On Linux one read of ``/proc/PID/stat`` gives all four (psutil reads three files for
    them); elsewhere psutil's ``oneshot()``. A gone process raises ``ProcessLookupError``.
    """
    if _PROC_STAT:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            raise ProcessLookupError(pid) from None
        fields = data[data.rfind(b")") + 2 :].split()
        # fields[0] is field 3 of proc(5): state; utime 14, stime 15, threads 20, rss 24
        cpu = (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
        return fields[0].decode(), cpu, int(fields[17]), int(fields[21]) * _PAGE_BYTES
    with proc.oneshot():
        times = proc.cpu_times()
        state = "Z" if proc.status() == psutil.STATUS_ZOMBIE else "R"
        return state, times.user + times.system, proc.num_threads(), proc.memory_info().rss


# -- how many CPUs a process may use ----------------------------------------------------
def usable_cpu_cores(pid: int | None = None) -> tuple[float, str]:
    """How many cores ``pid`` (this process by default) may keep busy, and where that came from.

    The smaller of the cgroup CPU quota (``docker run --cpus``, Kubernetes limits; read by
    :func:`tfres.backends.host.cgroup_cpu_quota_cores` for our own cgroup, which a child we
    start inherits) and the CPU affinity of ``pid`` (``taskset``, cpusets). The text names
    the source, e.g. ``"cgroup CPU quota (1.5 cores)"`` or ``"CPU affinity (8 cores)"``; it
    is the denominator of ``process_cpu_share_percent``.
    """
    from tfres.backends.host import cgroup_cpu_quota_cores

    pid = os.getpid() if pid is None else pid
    try:
        affinity = len(psutil.Process(pid).cpu_affinity() or []) or None
    except (psutil.Error, OSError, AttributeError):
        affinity = None
    if affinity is None:
        affinity = os.cpu_count() or 1
    try:
        quota = cgroup_cpu_quota_cores()
    except Exception as err:  # a fact we cannot read is None, never a crash
        log.debug("cgroup CPU quota unknown: %s", err)
        quota = None
    if quota is not None and quota < affinity:
        return quota, f"cgroup CPU quota ({quota:g} cores)"
    return float(affinity), f"CPU affinity ({affinity} cores)"


def swap_total_bytes() -> int | None:
    """Total swap space, or None where it cannot be read."""
    try:
        return int(psutil.swap_memory().total)
    except (OSError, RuntimeError):
        return None


def cpu_seconds_of_this_thread() -> Callable[[], float]:
    """A clock of this thread's own CPU time (used to measure the sampler's cost)."""
    return time.thread_time


def signal_tree(pid: int, sig: int) -> None:
    """Send ``sig`` to ``pid`` and all its descendants, children first; gone ones are skipped."""
    try:
        root = psutil.Process(pid)
        procs = [*root.children(recursive=True), root]
    except psutil.Error:
        return
    for proc in procs:
        try:
            proc.send_signal(sig)
        except psutil.Error:
            pass
