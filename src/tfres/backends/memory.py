"""This machine's free memory and this process's peak memory, as the OS reports them.

available_memory_bytes()   # the same as `free -b`'s "available" column
peak_rss_bytes()           # the most resident memory this process ever held
"""

from __future__ import annotations

import sys

import psutil

__all__ = ["available_memory_bytes", "peak_rss_bytes"]


def available_memory_bytes() -> int:
    """Memory a new allocation can get without swapping (``MemAvailable`` on Linux)."""
    return int(psutil.virtual_memory().available)


def peak_rss_bytes() -> int | None:
    """This process's peak resident set size (``getrusage``'s ``ru_maxrss``).

    None where the OS has no ``getrusage`` (Windows). Linux reports KiB and macOS bytes; the
    result is bytes on both.
    """
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024
