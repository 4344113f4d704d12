"""Live readings of one process tree (:mod:`tfres.backends.proc_tree`) and of the whole
host (:mod:`tfres.backends.host_now`), re-exported here, with the CPUs a process may use.
"""

from __future__ import annotations

import logging
import os
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
    "usable_cpu_cores",
    "swap_total_bytes",
    "cpu_seconds_of_this_thread",
]

log = logging.getLogger("tfres")


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
