"""Linux ``/proc`` files kept open and read again with ``pread``, and the newest pid.

Opening a ``/proc`` file costs more than reading it (measured on the 2-core EPYC VM of
docs/benchmarks/overhead.md: ``open+read`` of ``/proc/net/dev`` 40 us, ``pread`` of the
same open file 10 us; ``/proc/stat`` 23 us against 9 us). ``/proc`` files are generated at
each read from offset 0, so a file opened once and read with ``pread(fd, n, 0)`` gives fresh
figures every time. A ``/proc/PID/stat`` kept open stays bound to that process: once it has
exited the read fails (``ESRCH``), even if its pid was reused, so a reused pid is never
mistaken for the old process.

Linux only; :data:`PROC_AVAILABLE` is False elsewhere and callers use psutil instead.
"""

from __future__ import annotations

import errno
import os
import weakref

__all__ = ["PROC_AVAILABLE", "ProcFiles", "NewPids", "read_once", "read_stat"]

#: whether this system has a Linux-style /proc (False on macOS and Windows)
PROC_AVAILABLE = os.path.exists("/proc/self/stat") and os.path.exists("/proc/loadavg")

_GONE = (errno.ESRCH, errno.ENOENT)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def read_once(path: str) -> bytes:
    """The whole file, opened and closed (for files read once, like a new pid's stat)."""
    with open(path, "rb") as fh:
        return fh.read()


def read_stat(path: str) -> bytes:
    """A ``/proc/PID/stat`` line (under 2 KB, made in one go) read once: three syscalls
    (open, read, close) where ``open(path, "rb").read()`` makes eight (fstat, ioctl, two
    lseeks, a second read). After a sleep each syscall costs ~30 us on the VM of
    docs/benchmarks/overhead.md: a scan of ~190 processes took 7.4 ms the long way."""
    fd = os.open(path, os.O_RDONLY | _CLOEXEC)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def _close_all(fds: dict[str, int]) -> None:
    for fd in fds.values():
        try:
            os.close(fd)
        except OSError:
            pass
    fds.clear()


class ProcFiles:
    """Open ``/proc`` files, each opened once and then re-read with ``pread``.

    ``read(path)`` raises ``ProcessLookupError`` when the file (or its process) is gone and
    ``OSError`` for anything else; the descriptors are closed by :meth:`forget`,
    :meth:`close` or when the object is collected.
    """

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}
        self._sizes: dict[str, int] = {}
        self._finalizer = weakref.finalize(self, _close_all, self._fds)

    def read(self, path: str) -> bytes:
        fd = self._fds.get(path)
        try:
            if fd is None:
                fd = os.open(path, os.O_RDONLY | _CLOEXEC)
                self._fds[path] = fd
            size = self._sizes.get(path, 4096)
            while True:
                data = os.pread(fd, size, 0)
                if len(data) < size:
                    return data
                size *= 4  # the file outgrew the buffer (a machine with many cores)
                self._sizes[path] = size
        except OSError as err:
            if err.errno in _GONE:
                self.forget(path)
                raise ProcessLookupError(path) from None
            raise

    def forget(self, path: str) -> None:
        """Close ``path`` (its process has exited)."""
        fd = self._fds.pop(path, None)
        self._sizes.pop(path, None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def close(self) -> None:
        self._finalizer()


class NewPids:
    """Which pids were handed out since the last call, from ``/proc/loadavg``.

    The 5th field of ``/proc/loadavg`` is the most recently created pid (threads included:
    they take ids from the same counter). One ``pread`` of it (~6 us) tells whether anything
    was created anywhere on the machine since the previous sample; only then are the new ids
    looked at. Given the machine's fork counter (read anyway with ``/proc/stat``), even that
    read is skipped while the counter stands still. :meth:`since_last` answers the list of
    new ids, or None when they cannot be listed cheaply (the first call, the pid counter
    wrapped, or more ids than processes on the machine): then a full scan of ``/proc`` is
    the cheaper way.
    """

    def __init__(self, files: ProcFiles) -> None:
        self._files = files
        self._last: int | None = None
        self._forks: int | None = None

    def _read(self) -> tuple[int, int]:
        fields = self._files.read("/proc/loadavg").split()
        tasks = int(fields[3].partition(b"/")[2])
        return int(fields[4]), tasks

    def since_last(self, forks: int | None = None) -> list[int] | None:
        """``forks``: the machine's count of created tasks (``processes`` in /proc/stat,
        read since the previous call), or None where it was not read this time; when it
        has not moved since the last count given, nothing was created since then (nor
        since any later call) and ``/proc/loadavg`` is not read (at 10 Hz it stands still
        on most samples)."""
        if forks is not None:
            previous_forks, self._forks = self._forks, forks
            if forks == previous_forks and self._last is not None:
                return []
        last, tasks = self._read()
        previous, self._last = self._last, last
        if previous is None or last < previous or last - previous > max(64, tasks):
            return None
        return list(range(previous + 1, last + 1))
