"""Static facts about the host: CPU, memory, container, background load (the cgroup
limits come from :mod:`tfres.backends.cgroup` and are re-exported here).

Read through psutil and ``/proc`` (py-cpuinfo only where ``/proc`` has no answer: it takes
about a second). The ``/proc`` and ``/sys`` readings are Linux's; elsewhere psutil answers
what it can and the rest is None.
"""

from __future__ import annotations

import functools
import logging
import os
import platform
import socket
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from tfres.backends.cgroup import CgroupLimits, cgroup_cpu_quota_cores, cgroup_limits, read_text
from tfres.backends.cpu_peak import first_cpuinfo_block

__all__ = [
    "CgroupLimits",
    "cgroup_limits",
    "cgroup_cpu_quota_cores",
    "affinity",
    "usable_cores",
    "in_container",
    "nvidia_pci_devices",
    "host_facts",
    "cpu_facts",
    "memory_facts",
    "LoadProbe",
    "top_processes",
]

log = logging.getLogger("tfres")


def affinity(pid: int = 0) -> list[int] | None:
    """The CPUs ``pid`` (this process by default) may run on (``taskset -p``); ``None`` where
    the OS cannot tell."""
    try:
        return sorted(os.sched_getaffinity(pid))
    except (AttributeError, OSError):
        pass
    try:
        return sorted(psutil.Process(pid or os.getpid()).cpu_affinity() or [])
    except (AttributeError, psutil.Error, OSError):
        return None


def usable_cores_and_source(
    pid: int = 0, *, limits: CgroupLimits | None = None
) -> tuple[float, str]:
    """How many cores ``pid`` (this process by default) may keep busy, and where that came
    from: the smaller of its CPU affinity (``taskset``, cpusets) and the cgroup CPU quota
    (``docker run --cpus``, Kubernetes limits; our own cgroup's, which a child we start
    inherits). ``docker run --cpus 1.5`` on an 8-core host gives ``(1.5, "cgroup CPU quota
    (1.5 cores)")``; with no quota, ``(8.0, "CPU affinity (8 cores)")``. With no affinity to
    read, the CPU count stands in for it.
    """
    cpus = affinity(pid)
    cores = len(cpus) if cpus else (os.cpu_count() or 1)
    try:
        quota = limits.cpu_quota_cores if limits is not None else cgroup_cpu_quota_cores()
    except Exception as err:  # a fact we cannot read is None, never a crash
        log.debug("cgroup CPU quota unknown: %s", err)
        quota = None
    if quota and quota < cores:
        return float(quota), f"cgroup CPU quota ({quota:g} cores)"
    return float(cores), f"CPU affinity ({cores} cores)"


def usable_cores(pid: int = 0, *, limits: CgroupLimits | None = None) -> float:
    """The number of :func:`usable_cores_and_source`, alone."""
    return usable_cores_and_source(pid, limits=limits)[0]


def in_container() -> tuple[bool | None, str | None]:
    """``(True, evidence)`` inside Docker/Podman/Kubernetes/LXC, ``(False, None)`` on a bare
    host; ``(None, None)`` outside Linux, where tfres cannot tell."""
    if not sys.platform.startswith("linux"):
        return None, None
    for marker in ("/.dockerenv", "/run/.containerenv"):
        if os.path.exists(marker):
            return True, f"{marker} exists"
    if os.environ.get("container"):
        return True, f"container={os.environ['container']}"
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return True, "KUBERNETES_SERVICE_HOST is set"
    text = read_text(Path("/proc/1/cgroup")) or ""
    for word in ("kubepods", "docker", "containerd", "libpod", "lxc"):
        if word in text:
            return True, f"/proc/1/cgroup mentions {word}"
    return False, None


def nvidia_pci_devices(root: str | os.PathLike[str] = "/sys/bus/pci/devices") -> list[str] | None:
    """PCI addresses of NVIDIA display/3D controllers (vendor 0x10de), whatever the driver.

    This sees a GPU even when no driver is installed, which NVML cannot. ``None`` where the
    PCI bus cannot be read (not Linux, or /sys not mounted); ``[]`` when it has none.
    """
    base = Path(root)
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return None
    found = []
    for entry in entries:
        display = (read_text(entry / "class") or "").startswith("0x03")
        if display and read_text(entry / "vendor") == "0x10de":
            found.append(entry.name)
    return found


def _os_name() -> str:
    if sys.platform.startswith("linux"):
        for line in (read_text(Path("/etc/os-release")) or "").splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
        return "Linux"
    if sys.platform == "darwin":
        return f"macOS {platform.mac_ver()[0]}".strip()
    return f"{platform.system()} {platform.release()}".strip()


def host_facts() -> dict[str, Any]:
    """The ``host`` section: hostname, OS, kernel, Python, platform, machine, in_container."""
    container, evidence = in_container()
    return {
        "source": "platform, socket, /etc/os-release, /proc/1/cgroup",
        "hostname": socket.gethostname(),
        "os": _os_name(),
        "kernel": platform.release(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": sys.platform,
        "machine": platform.machine(),
        "in_container": container,
        "in_container_evidence": evidence,
    }


def _proc_cpuinfo() -> dict[str, str]:
    """The first processor block of /proc/cpuinfo, as key -> value."""
    return first_cpuinfo_block(read_text(Path("/proc/cpuinfo")) or "")


@functools.lru_cache(maxsize=1)
def _py_cpuinfo() -> dict[str, Any]:
    """py-cpuinfo's answer (about a second: it is asked once, and only when /proc cannot tell)."""
    try:
        import cpuinfo

        return dict(cpuinfo.get_cpu_info())
    except Exception as err:  # py-cpuinfo runs external tools and can fail many ways
        log.debug("py-cpuinfo failed: %s", err)
        return {}


def cpu_facts(*, limits: CgroupLimits | None = None) -> dict[str, Any]:
    """The ``cpu`` section: model, cores, frequency, ISA flags, affinity, cgroup quota.

    ``isa_flags`` values are ``None`` when the flags cannot be read; ``frequency_mhz`` is
    ``None`` where neither psutil nor /proc know it (some VMs). ``usable_cores`` is the
    smaller of the affinity count and the cgroup CPU quota.
    """
    limits = limits or cgroup_limits()
    sources = ["psutil"]
    proc = _proc_cpuinfo()
    model = next(
        (proc[k] for k in ("model name", "Model", "cpu model", "Hardware") if proc.get(k)), None
    )
    flags_text = proc.get("flags") or proc.get("Features")
    if proc:
        sources.append("/proc/cpuinfo")
    if not model or flags_text is None:
        info = _py_cpuinfo()
        if info:
            sources.append("py-cpuinfo")
            model = model or info.get("brand_raw")
            if flags_text is None and info.get("flags"):
                flags_text = " ".join(info["flags"])
    flags = set((flags_text or "").split()) if flags_text is not None else None
    frequency: float | None = None
    try:
        freq = psutil.cpu_freq()
        if freq is not None:
            frequency = float(freq.current or freq.max) or None
    except (OSError, NotImplementedError, RuntimeError, AttributeError):
        freq = None
    if frequency is None and proc.get("cpu MHz"):
        try:
            frequency = float(proc["cpu MHz"])
        except ValueError:
            frequency = None
    cpus = affinity()
    if cpus is not None:
        sources.append("sched_getaffinity")
    if limits.version is not None:
        sources.append(f"cgroup v{limits.version}")
    return {
        "source": ", ".join(sources),
        "model": model or platform.processor() or None,
        "physical_cores": psutil.cpu_count(logical=False),
        "logical_cores": psutil.cpu_count(logical=True),
        "frequency_mhz": frequency,
        "isa_flags": {
            name: (None if flags is None else name in flags) for name in ("avx2", "avx512f", "fma")
        },
        "affinity": cpus,
        "cgroup_version": limits.version,
        "cgroup_cpu_quota_cores": limits.cpu_quota_cores,
        "usable_cores": usable_cores(limits=limits),
    }


def memory_facts(*, limits: CgroupLimits | None = None) -> dict[str, Any]:
    """The ``memory`` section: RAM total/available, swap, the cgroup memory limit.

    The same figures as ``free -b``: ``available_bytes`` is its "available" column.
    ``cgroup_memory_limit_bytes`` is ``None`` when the cgroup sets no limit.
    """
    limits = limits or cgroup_limits()
    vm = psutil.virtual_memory()
    try:
        swap = psutil.swap_memory()
        swap_total: int | None = int(swap.total)
        swap_used: int | None = int(swap.used)
    except (OSError, RuntimeError):
        swap_total = swap_used = None
    return {
        "source": "psutil" + (f", cgroup v{limits.version}" if limits.version else ""),
        "total_bytes": int(vm.total),
        "available_bytes": int(vm.available),
        "swap_total_bytes": swap_total,
        "swap_used_bytes": swap_used,
        "cgroup_memory_limit_bytes": limits.memory_limit_bytes,
    }


class LoadProbe:
    """The top processes by CPU and by memory, measured over a short window.

    Idle processes (0% over the window) are not listed under ``top_cpu``.

    :meth:`start` primes the CPU counters; :meth:`finish` waits until ``window_seconds``
    have passed since then and reads them, so other work can be done in between. This
    process (the one measuring) is left out: the section is about *other* load.

        probe = LoadProbe().start(); ...; probe.finish()["top_cpu"]
    """

    def __init__(self, *, window_seconds: float = 0.2, top: int = 5) -> None:
        if not window_seconds >= 0:
            raise ValueError(f"window_seconds must be >= 0 (got {window_seconds!r})")
        self.window_seconds = window_seconds
        self.top = top
        self._t0: float | None = None
        self._procs: list[psutil.Process] = []

    def start(self) -> LoadProbe:
        me = os.getpid()
        self._procs = []
        for proc in psutil.process_iter():
            if proc.pid == me:
                continue
            try:
                proc.cpu_percent(None)
            except (psutil.Error, OSError):
                continue
            self._procs.append(proc)
        self._t0 = time.monotonic()
        return self

    def finish(self) -> dict[str, Any]:
        if self._t0 is None:
            self.start()
        assert self._t0 is not None
        left = self.window_seconds - (time.monotonic() - self._t0)
        if left > 0:
            time.sleep(left)
        window = time.monotonic() - self._t0
        cpu: list[dict[str, Any]] = []
        mem: list[dict[str, Any]] = []
        for proc in self._procs:
            try:
                with proc.oneshot():
                    percent = proc.cpu_percent(None)
                    rss = proc.memory_info().rss
                    name = proc.name()
            except (psutil.Error, OSError):
                continue
            if percent > 0:
                cpu.append({"pid": proc.pid, "name": name, "cpu_percent": round(percent, 1)})
            mem.append({"pid": proc.pid, "name": name, "rss_bytes": int(rss)})
        cpu.sort(key=lambda p: p["cpu_percent"], reverse=True)
        mem.sort(key=lambda p: p["rss_bytes"], reverse=True)
        return {
            "source": f"psutil over {window:.2f} s (this process left out; 100% = one core)",
            "window_seconds": round(window, 3),
            "top_cpu": cpu[: self.top],
            "top_memory": mem[: self.top],
        }


def top_processes(*, window_seconds: float = 0.2, top: int = 5) -> dict[str, Any]:
    """The ``load`` section: top processes by CPU (over ``window_seconds``) and by RSS."""
    return LoadProbe(window_seconds=window_seconds, top=top).start().finish()
