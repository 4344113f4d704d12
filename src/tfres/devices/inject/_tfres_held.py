# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""Short system calls that keep the GIL: the hook's reads and writes between two steps.

``os.pread`` and ``os.write`` let the GIL go for the call. Where the program's input
pipeline runs Python on another thread (a ``from_generator``, a ``numpy_function`` map, a
``PyDataset`` worker), that thread can take it, and the step's thread then gets it back only
when the pipeline lets go: up to the interpreter's switch interval, 5 ms, time the program
never spends on its own. ``benchmarks/hook_gil.py`` measured it beside a thread running a
Python loop: under load (about 5 on 2 cores) a ``/proc/self/io`` read took 5.16 ms through
``os.pread`` and 0.065 ms through :func:`pread` here (medians of 200); on a quiet machine
both took 0.006 ms, the step's thread taking the GIL back before the other one woke.

These calls go through ``ctypes.PyDLL``, whose foreign calls keep the GIL, to the C
library's ``pread`` and ``write``: a few microseconds on ``/proc`` or a local file. Where
the C library cannot be loaded (not a POSIX system), they fall back to ``os``'s.
"""

import ctypes
import os


def _libc():
    try:
        lib = ctypes.PyDLL(None, use_errno=True)  # the interpreter's symbols: the C library's
        pread, write = lib.pread, lib.write
    except (AttributeError, OSError, TypeError):
        return None
    pread.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64)
    pread.restype = ctypes.c_ssize_t
    write.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t)
    write.restype = ctypes.c_ssize_t
    return pread, write


_LIBC = _libc()


def pread(fd, size, offset=0):
    """Up to ``size`` bytes of ``fd`` from ``offset``, the GIL held; ``OSError`` as
    ``os.pread`` raises it."""
    if _LIBC is None:
        return os.pread(fd, size, offset)
    buf = ctypes.create_string_buffer(size)
    got = _LIBC[0](fd, buf, size, offset)
    if got < 0:
        raise OSError(ctypes.get_errno(), "pread failed")
    return buf.raw[:got]


def write(fd, data):
    """Write all of ``data`` (bytes) to ``fd``, the GIL held; ``OSError`` as ``os.write``
    raises it."""
    if _LIBC is None:
        while data:
            data = data[os.write(fd, data) :]
        return
    while data:
        done = _LIBC[1](fd, data, len(data))
        if done < 0:
            raise OSError(ctypes.get_errno(), "write failed")
        data = data[done:]


class ProcFile:
    """A small ``/proc`` file read again and again through one descriptor, opened by the
    process that reads it (a forked worker opens its own): :meth:`read` gives its text as
    bytes, or None where it cannot be read (not Linux, no such file)."""

    def __init__(self, path, size=512):
        self.path = path
        self.size = size
        self._fd = None
        self._pid = None

    def read(self):
        try:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                self._fd = os.open(self.path, os.O_RDONLY)
            if self._fd is None:
                return None
            return pread(self._fd, self.size, 0)
        except Exception:
            self._fd = None
            return None
