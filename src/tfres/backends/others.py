"""The busiest processes *outside* a watched tree, over a whole run: who else took the CPU.

    others = OtherProcesses()
    others.scan(exclude={pid})     # at start, every few seconds, at stop
    others.top(exclude={pid})      # -> [{"pid", "name", "cpu_percent"}], 100 = one core

Each scan reads every process's cumulative CPU seconds; a process's CPU over the run is
what it used between the first scan that saw it and the last one, divided by the time from
the first scan to the last (a process born during the run counts from zero). Processes
that vanish keep what they used until the last scan that saw them; ones that cannot be
read are skipped. On Linux one ``/proc/PID/stat`` read per process gives the parent, the
name and the CPU seconds, three syscalls (~40 us a process after a sleep, ~8 us hot;
psutil's ``process_iter`` takes ~25 us hot);
elsewhere psutil. The watched processes, their descendants and this process are left out.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

import psutil

from tfres.backends.proc_files import read_stat

__all__ = ["ProcessCpu", "OtherProcesses", "read_processes", "OTHERS_CPU_SHARE", "TOP"]

#: scans may take at most this share of one core: they are spaced out when slow
OTHERS_CPU_SHARE = 0.001
#: how many processes :meth:`OtherProcesses.top` lists by default
TOP = 5

_PROC = os.path.exists("/proc/self/stat")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class ProcessCpu:
    """One process at one scan: its cumulative user+system CPU seconds.

    ``started`` tells a process from a later one with the same pid (clock ticks since boot
    on Linux, the creation time elsewhere); only its equality matters.
    """

    pid: int
    ppid: int
    name: str
    cpu_seconds: float
    started: float


def read_processes() -> list[ProcessCpu]:
    """Every process this user can read, with its CPU seconds; unreadable ones skipped."""
    return _read_proc() if _PROC else _read_psutil()


def _read_proc() -> list[ProcessCpu]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            data = read_stat(f"/proc/{entry}/stat")
            close = data.rfind(b")")
            fields = data[close + 2 :].split()
            # fields[0] is field 3 of proc(5): ppid 4, utime 14, stime 15, starttime 22
            out.append(
                ProcessCpu(
                    pid=int(entry),
                    ppid=int(fields[1]),
                    name=data[data.find(b"(") + 1 : close].decode(errors="replace"),
                    cpu_seconds=(int(fields[11]) + int(fields[12])) / _CLOCK_TICKS,
                    started=float(fields[19]),
                )
            )
        except (OSError, ValueError, IndexError):  # gone, or not ours to read
            continue
    return out


def _read_psutil() -> list[ProcessCpu]:
    out = []
    for proc in psutil.process_iter():
        try:
            with proc.oneshot():
                times = proc.cpu_times()
                out.append(
                    ProcessCpu(
                        pid=proc.pid,
                        ppid=proc.ppid(),
                        name=proc.name(),
                        cpu_seconds=times.user + times.system,
                        started=proc.create_time(),
                    )
                )
        except (psutil.Error, OSError):
            continue
    return out


@dataclass
class _Seen:
    name: str
    first_cpu: float
    last_cpu: float


class OtherProcesses:
    """CPU of the processes outside a watched tree, from scans spread over a run.

    ``reader`` lists the processes (:func:`read_processes`; tests inject one), ``clock``
    times the scans. :meth:`due` says when the next scan is worth it: every
    ``every_seconds``, further apart when a scan is slow (at most :data:`OTHERS_CPU_SHARE`
    of a core). ``scans``/``cost_seconds`` say what the scans took.

        others = OtherProcesses()
        others.scan(exclude={child_pid}); ...; others.scan(exclude={child_pid})
        others.top(exclude={child_pid})  # [{"pid": 812, "name": "chrome", "cpu_percent": 93.0}]
    """

    def __init__(
        self,
        *,
        reader: Callable[[], Iterable[ProcessCpu]] = read_processes,
        clock: Callable[[], float] = time.monotonic,
        every_seconds: float = 3.0,
    ) -> None:
        self._reader = reader
        self._clock = clock
        self.every_seconds = every_seconds
        self._seen: dict[tuple[int, float], _Seen] = {}
        self._first: float | None = None
        self._last: float | None = None
        self._last_cost = 0.0
        #: when the next scan is due on ``clock`` (what :meth:`due` says, without a call)
        self.due_at = float("-inf")
        #: how many scans ran, and the CPU seconds (this thread's) they took in all
        self.scans = 0
        self.cost_seconds = 0.0

    def due(self) -> bool:
        """Whether the next scan is due (always before the first)."""
        if self._last is None:
            return True
        every = max(self.every_seconds, self._last_cost / OTHERS_CPU_SHARE)
        return self._clock() - self._last >= every

    def scan(self, *, exclude: Collection[int] = ()) -> None:
        """Read every process's CPU now; ``exclude`` and their descendants are left out.

        This process is always left out.
        """
        started = time.thread_time()
        now = self._clock()
        procs = list(self._reader())
        skip = _with_descendants(procs, set(exclude)) | {os.getpid()}
        first = self._first is None
        for p in procs:
            if p.pid in skip:
                continue
            seen = self._seen.get((p.pid, p.started))
            if seen is None:
                # there from the start: count from now; born during the run: from zero
                base = p.cpu_seconds if first else 0.0
                self._seen[(p.pid, p.started)] = _Seen(p.name, base, p.cpu_seconds)
            else:
                seen.last_cpu = max(seen.last_cpu, p.cpu_seconds)
        if first:
            self._first = now
        self._last = now
        self.scans += 1
        self._last_cost = time.thread_time() - started
        self.cost_seconds += self._last_cost
        self.due_at = now + max(self.every_seconds, self._last_cost / OTHERS_CPU_SHARE)

    @property
    def span_seconds(self) -> float | None:
        """Seconds from the first scan to the last; None before two scans."""
        if self._first is None or self._last is None or self.scans < 2:
            return None
        return self._last - self._first

    def source(self) -> str | None:
        """How :meth:`top` was measured, in words; None before two scans."""
        span = self.span_seconds
        if span is None:
            return None
        return (
            f"{self.scans} scans of all processes over {span:.1f} s, "
            f"{1000 * self.cost_seconds / self.scans:.1f} ms each (the watched processes and "
            "tfres left out; 100% = one core)"
        )

    def top(self, n: int = TOP, *, exclude: Collection[int] = ()) -> list[dict[str, Any]] | None:
        """The ``n`` busiest processes over the scans, busiest first; None before two scans.

        ``cpu_percent`` is 100 for one core busy all along (as ``top`` shows a process);
        idle processes and the pids in ``exclude`` are not listed.
        """
        span = self.span_seconds
        if span is None or span <= 0:
            return None
        skip = set(exclude)
        busy: list[tuple[float, int, str]] = []
        for (pid, _), seen in self._seen.items():
            percent = round(100.0 * (seen.last_cpu - seen.first_cpu) / span, 1)
            if pid not in skip and percent > 0:
                busy.append((percent, pid, seen.name))
        busy.sort(key=lambda b: b[0], reverse=True)
        return [{"pid": pid, "name": name, "cpu_percent": cpu} for cpu, pid, name in busy[:n]]


def _with_descendants(procs: list[ProcessCpu], roots: set[int]) -> set[int]:
    """``roots`` and every listed process descending from one of them."""
    parent = {p.pid: p.ppid for p in procs}
    inside = set(roots)
    outside: set[int] = set()
    for pid in parent:
        chain: list[int] = []
        cur = pid
        while cur not in inside and cur not in outside and cur in parent and len(chain) < 64:
            chain.append(cur)
            cur = parent[cur]
        (inside if cur in inside else outside).update(chain)
    return inside
