"""Live readings of one process tree (:mod:`tfres.backends.proc_tree`) and of the whole
host (:mod:`tfres.backends.host_now`), re-exported here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import psutil

from tfres.backends.host_now import HostReader, HostReading, read_host
from tfres.backends.proc_tree import ProcessTree, TreeReading

__all__ = [
    "HostReading",
    "HostReader",
    "TreeReading",
    "read_host",
    "ProcessTree",
    "swap_total_bytes",
    "cpu_seconds_of_this_thread",
]

log = logging.getLogger("tfres")


def swap_total_bytes() -> int | None:
    """Total swap space, or None where it cannot be read."""
    try:
        return int(psutil.swap_memory().total)
    except (OSError, RuntimeError):
        return None


def cpu_seconds_of_this_thread() -> Callable[[], float]:
    """A clock of this thread's own CPU time (used to measure the sampler's cost)."""
    return time.thread_time
