"""Live readings of the whole host: CPU per core, memory, swap, disk and network counters.

On Linux each comes from one read of a ``/proc`` file (``/proc/stat``, ``/proc/meminfo``,
``/proc/diskstats``, ``/proc/net/dev``), about 0.1 ms together, a third of what the same
psutil calls cost (measured: psutil's ``net_io_counters`` alone took ~0.3 ms cold); the
figures are psutil's (same rules, checked against it in the tests). Elsewhere psutil.
:mod:`tfres.backends.proc` re-exports these names.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import NamedTuple

import psutil

from tfres.backends.proc_files import PROC_AVAILABLE, ProcFiles, read_once

__all__ = ["HostReading", "HostReader", "read_host"]


class HostReading(NamedTuple):
    """Totals of the whole host at one instant; disk and network bytes are cumulative.

    A named tuple, not a dataclass: one is made per sample, and at 100 Hz a frozen
    dataclass's ``__init__`` (~4 us) was a measurable part of a sample's cost.
    """

    cpu_percent: float | None
    cpu_per_core_percent: tuple[float, ...]
    memory_used_bytes: int | None
    memory_available_bytes: int | None
    swap_used_bytes: int | None
    disk_read_bytes: int | None
    disk_write_bytes: int | None
    net_sent_bytes: int | None
    net_recv_bytes: int | None
    #: False on readings that skipped the disk and network counters (see HostReader)
    io_read: bool = True
    #: False on readings that carry the CPU percentages of the previous one (see HostReader)
    cpu_read: bool = True
    #: False on readings that carry the memory and swap figures of the previous one
    memory_read: bool = True


_NO_IO = (None, None, None, None)


def _busy_and_total(times: object) -> tuple[float, float]:
    """Busy and total CPU seconds of one ``psutil.cpu_times()`` entry (psutil's own rule)."""
    values = times._asdict()  # type: ignore[attr-defined]
    total = sum(values.values()) - values.get("guest", 0.0) - values.get("guest_nice", 0.0)
    busy = total - values.get("idle", 0.0) - values.get("iowait", 0.0)
    return busy, total


class HostReader:
    """Reads the host; CPU percentages are over the time since this reader's previous reading.

    Unlike ``psutil.cpu_percent()``, every reader keeps its own previous CPU times, so two
    samplers in one process do not disturb each other. The first reading has no CPU
    percentages (``None`` and ``()``): a percentage needs two readings.

    Disk and network counters are read at most every ``io_every_seconds`` (on ``clock``);
    readings in between have them None and ``io_read=False``. At 100 Hz they would be half
    of each sample's file reads, for rates nobody reads at that resolution.

    The CPU times are read at most every ``cpu_every_seconds``: the kernel counts them in
    clock ticks (``USER_HZ``, 10 ms), so over one 10 ms interval a core is 0% or 100% busy,
    a figure with nothing to tell. Readings in between carry the percentages of the last
    span read (``cpu_read=False``), so at 100 Hz each percentage is over ~100 ms, the same
    figure as at 10 Hz, and the file (the costliest of a sample's reads) is read a tenth as
    often. :attr:`forks` is None on those readings (it was not read). Memory and swap are
    read at most every ``memory_every_seconds`` (carried, ``memory_read=False``): at 100 Hz
    the host-wide figures are the 10 Hz ones, and only the watched tree's own memory (read
    by :class:`tfres.backends.proc_tree.ProcessTree`) keeps the full rate.
    """

    def __init__(
        self,
        *,
        io_every_seconds: float = 0.0,
        cpu_every_seconds: float = 0.0,
        memory_every_seconds: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._prev_cores: list[tuple[float, float]] | None = None
        self.io_every_seconds = io_every_seconds
        self.cpu_every_seconds = cpu_every_seconds
        self.memory_every_seconds = memory_every_seconds
        self._clock = clock
        self._last_io: float | None = None
        self._last_cpu: float | None = None
        self._cpu_now: tuple[float | None, tuple[float, ...]] = (None, ())
        self._last_memory: float | None = None
        self._memory_now: tuple[int | None, int | None, int | None] = (None, None, None)
        self._next_due = float("-inf")  # when the next of CPU, memory, disk/net is due
        self._carried = HostReading(None, (), None, None, None, None, None, None, None)
        #: the /proc files, kept open and re-read with pread (Linux)
        self._read_file: Callable[[str], bytes] = ProcFiles().read if PROC_AVAILABLE else read_once
        #: processes and threads created since boot, as of the last reading (``processes``
        #: in /proc/stat); None where it cannot be read. A process tree reader uses it to
        #: skip looking for new pids when nothing was created (see ProcessTree's ``forks``)
        self.forks: int | None = None

    def __call__(self) -> HostReading:
        return self.read()

    def _cpu(self) -> tuple[float | None, tuple[float, ...]]:
        try:
            text: bytes | None = self._read_file("/proc/stat")
        except OSError:
            text = None
        cores = _stat_cores(text) if text else None
        self.forks = _stat_forks(text) if text else None
        if cores is None:
            try:
                cores = [_busy_and_total(t) for t in psutil.cpu_times(percpu=True)]
            except (OSError, RuntimeError):
                return None, ()
        prev, self._prev_cores = self._prev_cores, cores
        if prev is None or len(prev) != len(cores):
            return None, ()
        per_core: list[float] = []
        busy_sum = total_sum = 0.0
        for (b0, t0), (b1, t1) in zip(prev, cores, strict=True):
            d_busy, d_total = max(0.0, b1 - b0), t1 - t0
            busy_sum += d_busy
            total_sum += max(0.0, d_total)
            # to 0.1: int(10x + 0.5) / 10, not round(x, 1), which formats a string and back
            per_core.append(
                int(min(1000.0, 1000.0 * d_busy / d_total) + 0.5) / 10 if d_total > 0 else 0.0
            )
        total = (
            int(min(1000.0, 1000.0 * busy_sum / total_sum) + 0.5) / 10 if total_sum > 0 else None
        )
        return total, tuple(per_core)

    def read(self) -> HostReading:
        now = self._clock()
        if now < self._next_due:  # nothing due (9 samples in 10 at 100 Hz): all carried
            self.forks = None
            return self._carried
        # 0.95: a sampler's beat jitters; a reading 99 ms after the last still counts as 100
        cpu_next = (self._last_cpu or 0.0) + 0.95 * self.cpu_every_seconds
        cpu = self._last_cpu is None or now >= cpu_next
        if cpu:
            self._last_cpu, cpu_next = now, now + 0.95 * self.cpu_every_seconds
            self._cpu_now = self._cpu()
        else:
            self.forks = None
        memory_next = (self._last_memory or 0.0) + 0.95 * self.memory_every_seconds
        memory = self._last_memory is None or now >= memory_next
        if memory:
            self._last_memory, memory_next = now, now + 0.95 * self.memory_every_seconds
            self._memory_now = self._memory()
        # 0.9: a reading 0.95 s after the last still counts as 1 s
        io_next = (self._last_io or 0.0) + 0.9 * self.io_every_seconds
        io = self._last_io is None or now >= io_next
        disk_read = disk_write = net_sent = net_recv = None
        if io:
            self._last_io, io_next = now, now + 0.9 * self.io_every_seconds
            disk_read, disk_write = self._disk()
            net_sent, net_recv = _net_bytes(self._read_file)
        self._next_due = min(cpu_next, memory_next, io_next)
        total, per_core = self._cpu_now
        used, available, swap_used = self._memory_now
        # tuple.__new__: one C call, where the named tuple's own __new__ is a Python frame
        figures = (total, per_core, used, available, swap_used)
        self._carried = tuple.__new__(HostReading, (*figures, *_NO_IO, False, False, False))
        io_figures = (disk_read, disk_write, net_sent, net_recv)
        return tuple.__new__(HostReading, (*figures, *io_figures, io, cpu, memory))

    def _memory(self) -> tuple[int | None, int | None, int | None]:
        """(used, available, swap used): one read of /proc/meminfo on Linux, else psutil."""
        fields = _meminfo(self._read_file)
        if fields is not None and "MemAvailable" in fields:
            swap = None
            if "SwapTotal" in fields and "SwapFree" in fields:
                swap = fields["SwapTotal"] - fields["SwapFree"]
            return fields["MemTotal"] - fields["MemAvailable"], fields["MemAvailable"], swap
        try:
            vm = psutil.virtual_memory()
            used: int | None = vm.total - vm.available
            available: int | None = vm.available
        except (OSError, RuntimeError):
            used = available = None
        try:
            swap_used: int | None = psutil.swap_memory().used
        except (OSError, RuntimeError):
            swap_used = None
        return used, available, swap_used

    def _disk(self) -> tuple[int | None, int | None]:
        """Bytes read and written by whole disks (partitions left out, as psutil does)."""
        totals = _diskstats(self._read_file)
        if totals is not None:
            return totals
        try:
            disk = psutil.disk_io_counters()
        except (OSError, RuntimeError):
            disk = None
        return (disk.read_bytes, disk.write_bytes) if disk else (None, None)


def _proc_stat_cores(read: Callable[[str], bytes] = read_once) -> list[tuple[float, float]] | None:
    """(busy, total) jiffies of every CPU from /proc/stat, by psutil's rule; None off Linux.

    Busy excludes idle and iowait; guest time is already inside user time, so it is not
    counted twice. The unit does not matter: only ratios of differences are used.
    """
    try:
        text = read("/proc/stat")
    except OSError:
        return None
    return _stat_cores(text)


def _stat_cores(text: bytes) -> list[tuple[float, float]] | None:
    # the cpuN lines come first; the long "intr" line after them is never split
    end = text.find(b"\nintr")
    cores: list[tuple[float, float]] = []
    for line in text[: end if end > 0 else len(text)].split(b"\n")[1:]:
        if not line.startswith(b"cpu"):
            continue
        # user nice system idle iowait irq softirq steal (guest, guest_nice: inside user)
        values = line.split(None, 9)[1:9]
        total = sum(map(int, values))
        busy = total - int(values[3]) - (int(values[4]) if len(values) > 4 else 0)
        cores.append((busy, total))
    return cores or None


def _stat_forks(text: bytes) -> int | None:
    """The ``processes`` line of /proc/stat: processes and threads created since boot."""
    start = text.find(b"\nprocesses ")
    if start < 0:
        return None
    try:
        return int(text[start + 11 : text.find(b"\n", start + 11)])
    except ValueError:
        return None


def _net_bytes(read: Callable[[str], bytes] = read_once) -> tuple[int | None, int | None]:
    """Bytes sent and received over every interface (as psutil counts them)."""
    try:
        lines = read("/proc/net/dev").split(b"\n")[2:]
    except OSError:
        try:
            net = psutil.net_io_counters()
        except (OSError, RuntimeError):
            return None, None
        return (net.bytes_sent, net.bytes_recv) if net else (None, None)
    sent = recv = 0
    for line in lines:
        _, sep, rest = line.partition(b":")
        if not sep:
            continue
        fields = rest.split()
        recv += int(fields[0])
        sent += int(fields[8])
    return sent, recv


def _meminfo(read: Callable[[str], bytes] = read_once) -> dict[str, int] | None:
    try:
        text = read("/proc/meminfo")
    except OSError:
        return None
    out: dict[str, int] = {}
    for name, key in _MEMINFO_KEYS:
        start = text.find(key)  # each is at the start of a line: MemTotal first, then "\n..."
        if start >= 0:
            start += len(key)
            out[name] = int(text[start : text.find(b"k", start)]) * 1024
    return out if "MemTotal" in out else None


_MEMINFO_KEYS = tuple(
    (name, (b"" if name == "MemTotal" else b"\n") + name.encode() + b":")
    for name in ("MemTotal", "MemAvailable", "SwapTotal", "SwapFree")
)
_whole_disks: set[bytes] | None = None


def _diskstats(read: Callable[[str], bytes] = read_once) -> tuple[int, int] | None:
    """Sectors read/written (512 bytes each, whatever the device) summed over /sys/block."""
    global _whole_disks
    if _whole_disks is None:
        try:
            _whole_disks = {os.fsencode(name) for name in os.listdir("/sys/block")}
        except OSError:
            _whole_disks = set()
    if not _whole_disks:
        return None
    try:
        lines = read("/proc/diskstats").split(b"\n")
    except OSError:
        return None
    sectors_read = sectors_written = 0
    for line in lines:
        parts = line.split()
        if len(parts) >= 10 and parts[2] in _whole_disks:
            sectors_read += int(parts[5])
            sectors_written += int(parts[9])
    return sectors_read * 512, sectors_written * 512


_default_host_reader = HostReader()


def read_host() -> HostReading:
    """One reading of the host; CPU percentages are since the previous ``read_host()`` call.

    A sampler uses its own :class:`HostReader` instead, so it is not disturbed by others.
    """
    return _default_host_reader.read()
