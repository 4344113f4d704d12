"""Live readings of one process tree: CPU, threads, RSS (and now and then USS/PSS).

Processes come and go while a training runs (data-loader workers, compilers): one that
vanishes or cannot be read mid-sample is skipped, never an error, and the CPU it used
still counts.

On Linux a reading costs one ``pread`` of each member's ``/proc/PID/stat`` (kept open,
:class:`tfres.backends.proc_files.ProcFiles`) and one of ``/proc/loadavg``: new processes
are looked for only when the machine's newest pid has moved, and then only among the new
pids, so a new worker is in the tree from the next sample on (one interval), at the cost of
a full ``/proc`` scan only at the start or when more pids were handed out than the machine
has tasks. CPU of descendants that already exited still counts: the kernel adds a reaped
child's CPU to its parent's ``cutime``/``cstime``, which is part of each member's figure;
a process whose parent is outside the tree (the root, orphans) keeps its last figure.
Elsewhere psutil is used and descendants are looked for every ``rescan_seconds``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import NamedTuple

import psutil

from tfres.backends.proc_files import PROC_AVAILABLE, NewPids, ProcFiles, read_stat

__all__ = ["TreeReading", "ProcessTree"]

#: USS/PSS readings may take at most this share of one core
FULL_MEMORY_CPU_SHARE = 0.0005

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class TreeReading(NamedTuple):
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


class _Stat(NamedTuple):
    state: bytes
    ppid: int
    cpu_seconds: float  # its own and its reaped children's, user+system
    threads: int
    rss_bytes: int


def _fields(data: bytes) -> list[bytes]:
    """The fields of a ``/proc/PID/stat`` line after the command name (field 3 onwards)."""
    return data[data.rfind(b")") + 2 :].split()


def _parse_stat(data: bytes) -> _Stat:
    f = data[data.rfind(b")") + 2 :].split(None, 22)  # up to rss: the rest is not split
    # proc(5): state 3, ppid 4, utime 14, stime 15, cutime 16, cstime 17, threads 20, rss 24
    ticks = int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
    return tuple.__new__(  # type: ignore[return-value]  # (one C call: see HostReading)
        _Stat, (f[0], int(f[1]), ticks / _CLOCK_TICKS, int(f[17]), int(f[21]) * _PAGE_BYTES)
    )


def _parse_rollup(data: bytes) -> tuple[int, int | None]:
    """(USS, PSS) bytes from ``/proc/PID/smaps_rollup``, by psutil's rule: USS is the sum of
    the ``Private_*`` lines (clean, dirty, hugetlb); ValueError when it has no ``Pss``."""
    uss = 0
    pss: int | None = None
    for line in data.split(b"\n"):
        if line.startswith(b"Private_"):
            uss += int(line.split()[1]) * 1024
        elif line.startswith(b"Pss:"):
            pss = int(line.split()[1]) * 1024
    if pss is None:
        raise ValueError("no Pss line in smaps_rollup")
    return uss, pss


def _psutil_stat(proc: psutil.Process) -> _Stat:
    with proc.oneshot():
        times = proc.cpu_times()
        state = b"Z" if proc.status() == psutil.STATUS_ZOMBIE else b"R"
        rss = proc.memory_info().rss
        return _Stat(state, proc.ppid(), times.user + times.system, proc.num_threads(), rss)


class ProcessTree:
    """The process ``pid`` and (with ``children=True``) all its descendants.

    USS and PSS (``memory_full_info``, ~5x the cost of RSS, ~3 ms for a process with
    TensorFlow loaded) are read every ``full_memory_seconds`` or, with
    ``full_memory_every=N``, on every Nth reading (0 never, 1 always), spaced further apart
    when slow so that they take at most 0.05% of a core (:data:`FULL_MEMORY_CPU_SHARE`).
    A root process that is gone or not ours gives readings with no pids.

    ``forks`` returns the machine's count of created tasks, read since the previous reading
    (:attr:`tfres.backends.host_now.HostReader.forks`, read just before): while it stands
    still, new pids are not looked for.
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
        use_proc: bool = PROC_AVAILABLE,
        forks: Callable[[], int | None] | None = None,
    ) -> None:
        self.pid = os.getpid() if pid is None else int(pid)
        self.children = children
        if full_memory_every is None:
            full_memory_every = 1 if full_memory else 0
        self.full_memory_every = max(0, int(full_memory_every))
        self.full_memory_seconds = full_memory_seconds
        self.rescan_seconds = rescan_seconds
        self._clock = clock
        self._forks = forks
        self._files: ProcFiles | None = ProcFiles() if use_proc else None
        self._new_pids = NewPids(self._files) if self._files is not None else None
        self._pending: list[int] = []  # new pids not visible yet: looked at once more
        #: the members: pid -> its parent's pid
        self._members: dict[int, int] = {}
        self._paths: dict[int, str] = {}  # pid -> "/proc/PID/stat", made once
        self._psutil: dict[int, psutil.Process] = {}
        self._last_cpu: dict[int, float] = {}
        self._gone_cpu_seconds = 0.0
        self._last_total = 0.0
        self._full_cost = 0.0
        self._last_full: float | None = None
        self._last_scan: float | None = None
        self._readings = 0
        self._root_alive = self._add(self.pid, -1)
        #: how many full scans of /proc (or psutil rescans) were made (their cost is high)
        self.full_scans = 0

    def pids(self) -> list[int]:
        """The pids of the tree as of the last reading."""
        return list(self._members)

    # -- membership ----------------------------------------------------------------------
    def _add(self, pid: int, ppid: int) -> bool:
        if self._files is None:
            try:
                self._psutil[pid] = psutil.Process(pid)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                return False
        elif not os.path.exists(f"/proc/{pid}/stat"):
            return False
        self._members[pid] = ppid
        return True

    def _leave(self, pid: int) -> None:
        """``pid`` has exited and was reaped: never read it again.

        When its parent is a member, the kernel has moved its CPU into the parent's
        ``cutime``/``cstime``, read with the parent; otherwise its last figure is kept.
        """
        parent = self._members.pop(pid, None)
        last = self._last_cpu.pop(pid, 0.0)
        if self._files is None or parent not in self._members:
            self._gone_cpu_seconds += last
        self._psutil.pop(pid, None)
        self._paths.pop(pid, None)
        if self._files is not None:
            self._files.forget(f"/proc/{pid}/stat")
            self._files.forget(f"/proc/{pid}/smaps_rollup")
        if pid == self.pid:
            self._root_alive = False

    def _discover(self) -> None:
        if not self.children or not self._root_alive:
            return
        if self._new_pids is None:
            now = self._clock()
            if self._last_scan is None or now - self._last_scan >= self.rescan_seconds:
                self._last_scan = now
                self._psutil_scan()
            return
        try:
            new = self._new_pids.since_last(self._forks() if self._forks is not None else None)
        except (OSError, ValueError, IndexError):
            new = None
        if new is None:
            self._full_scan()
            return
        if not new and not self._pending:  # most samples: nothing created anywhere
            return
        for pid in self._pending + new:
            self._look_at(pid, retry=pid in new)
        self._pending = [p for p in self._pending if p in new]

    def _look_at(self, pid: int, *, retry: bool) -> None:
        """Add the new ``pid`` if it is a process (not a thread) whose parent is a member."""
        if pid in self._members:
            return
        try:
            f = _fields(read_stat(f"/proc/{pid}/stat"))
        except OSError:  # not visible yet, or already gone: look once more next time
            if retry:
                self._pending.append(pid)
            return
        if f[35] != b"-1" and int(f[1]) in self._members:  # exit_signal -1: a thread
            self._add(pid, int(f[1]))

    def _full_scan(self) -> None:
        self.full_scans += 1
        parents: dict[int, list[int]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                ppid = int(_fields(read_stat(f"/proc/{name}/stat"))[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(name))
        todo = list(self._members)
        while todo:
            pid = todo.pop()
            for kid in parents.get(pid, ()):
                if kid not in self._members and self._add(kid, pid):
                    todo.append(kid)

    def _psutil_scan(self) -> None:
        self.full_scans += 1
        root = self._psutil.get(self.pid)
        try:
            kids = root.children(recursive=True) if root is not None else []
        except (psutil.Error, OSError):
            kids = []
        for kid in kids:
            cached = self._psutil.get(kid.pid)
            if cached is not None and cached != kid:  # the pid was reused by a new process
                self._leave(kid.pid)
            if kid.pid not in self._members:
                try:
                    self._members[kid.pid] = kid.ppid()
                    self._psutil[kid.pid] = kid
                except psutil.Error:
                    continue

    # -- reading -------------------------------------------------------------------------
    def _stat(self, pid: int) -> _Stat:
        if self._files is not None:
            path = self._paths.get(pid)
            if path is None:
                path = self._paths[pid] = f"/proc/{pid}/stat"
            return _parse_stat(self._files.read(path))
        return _psutil_stat(self._psutil[pid])

    def _full_memory_due(self, now: float) -> bool:
        self._readings += 1
        if self.full_memory_seconds is not None:
            every = max(self.full_memory_seconds, self._full_cost / FULL_MEMORY_CPU_SHARE)
            return self._last_full is None or now - self._last_full >= every
        n = self.full_memory_every
        return n > 0 and (self._readings - 1) % n == 0

    def _full_memory(self, pid: int) -> tuple[int, int | None]:
        if self._files is not None:
            try:  # kept open: ~3x cheaper than psutil's memory_full_info for a small process
                return _parse_rollup(self._files.read(f"/proc/{pid}/smaps_rollup"))
            except (OSError, ValueError, IndexError):  # ProcessLookupError too: it can be
                self._files.forget(f"/proc/{pid}/smaps_rollup")  # missing while alive
        proc = self._psutil.get(pid)
        if proc is None:
            proc = self._psutil[pid] = psutil.Process(pid)
        mem = proc.memory_full_info()
        return mem.uss, getattr(mem, "pss", None)

    def read(self) -> TreeReading:
        """One reading of the tree; processes that vanish or deny access are skipped."""
        now = self._clock()
        self._discover()
        full = self._full_memory_due(now)
        started = time.thread_time() if full else 0.0
        cpu = 0.0
        threads = rss = 0
        uss: int | None = 0 if full else None
        pss: int | None = 0 if full else None
        seen: list[int] = []
        members = self._members
        for pid in list(members):
            try:
                stat = self._stat(pid)
                self._members[pid] = stat.ppid
                self._last_cpu[pid] = stat.cpu_seconds
                cpu += stat.cpu_seconds
                if stat.state in (b"Z", b"X"):  # exited, not yet reaped: its CPU only
                    continue
                if full:
                    mem_uss, mem_pss = self._full_memory(pid)
                    uss = None if uss is None else uss + mem_uss
                    pss = None if pss is None or mem_pss is None else pss + mem_pss
            except (ProcessLookupError, psutil.NoSuchProcess, psutil.ZombieProcess):
                self._leave(pid)
                continue
            except (psutil.AccessDenied, OSError):
                if full:  # smaps may be unreadable (another user) while the rest is not
                    uss = pss = None
                continue
            threads += stat.threads
            rss += stat.rss_bytes
            seen.append(pid)
        if full:
            self._last_full = now
            self._full_cost = time.thread_time() - started
        # a child reaped between the reads of it and of its parent is missing for one
        # reading; the total never goes back
        total = cpu + self._gone_cpu_seconds
        if total > self._last_total:
            self._last_total = total
        return tuple.__new__(  # type: ignore[return-value]
            TreeReading,
            (tuple(seen), self._last_total, threads, rss, uss if seen else None,
             pss if seen else None),
        )  # fmt: skip
