"""Static facts about the host: CPU, memory, cgroup limits, container, background load.

Read through psutil, ``/proc`` and ``/sys/fs/cgroup`` (py-cpuinfo only where ``/proc`` has
no answer: it takes about a second). Containers are where users run, so the CPU quota and
memory limit of this process's cgroup are read in both layouts: cgroup v1
(``cpu.cfs_quota_us``/``cpu.cfs_period_us``, ``memory.limit_in_bytes``) and v2
(``cpu.max``, ``memory.max``). The cgroup root is a parameter so tests can point it at a
tree of their own.

    >>> cgroup_limits().cpu_quota_cores     # in `docker run --cpus 2`
    2.0
"""

from __future__ import annotations

import functools
import logging
import os
import platform
import socket
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psutil

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

DEFAULT_CGROUP_ROOT = Path("/sys/fs/cgroup")
DEFAULT_SELF_CGROUP = Path("/proc/self/cgroup")
#: cgroup v1 writes "no limit" as a huge number (PAGE_COUNTER_MAX pages), not as "max".
_UNLIMITED_BYTES = 1 << 60


@dataclass(frozen=True)
class CgroupLimits:
    """The CPU quota and memory limit of this process's cgroup.

    ``cpu_quota_cores`` is the quota in cores (``docker run --cpus 1.5`` gives 1.5) and
    ``memory_limit_bytes`` the hard memory limit; each is ``None`` when there is no limit
    or no cgroup to read. ``version`` is 1 or 2, ``None`` outside any readable cgroup. When
    nested cgroups both set a limit, the smallest one applies and is the one given.
    """

    version: int | None = None
    cpu_quota_cores: float | None = None
    memory_limit_bytes: int | None = None
    cpu_path: str | None = None
    memory_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None


def _self_cgroups(self_cgroup: Path) -> tuple[str | None, dict[str, str]]:
    """(the v2 path, {v1 controller: path}) from ``/proc/self/cgroup``."""
    v2: str | None = None
    v1: dict[str, str] = {}
    for line in (_read(self_cgroup) or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            v2 = path
        for controller in controllers.split(","):
            if controller:
                v1[controller] = path
    return v2, v1


def _chain(base: Path, path: str | None) -> list[Path]:
    """The cgroup folders from this process's leaf up to ``base`` (the mount point).

    Where the path from ``/proc/self/cgroup`` does not exist under the mount (a container
    that mounts its own cgroup as the root), the mount point itself is the leaf.
    """
    leaf = base
    if path and path != "/":
        candidate = base / path.lstrip("/")
        if candidate.is_dir():
            leaf = candidate
    chain = [leaf]
    while leaf != base and base in leaf.parents:
        leaf = leaf.parent
        chain.append(leaf)
    return chain


def _smallest(values: Iterable[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return min(found) if found else None


def _v1_quota(folder: Path) -> float | None:
    quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
    try:
        q, p = int(quota or ""), int(period or "")
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def _v2_quota(folder: Path) -> float | None:
    text = _read(folder / "cpu.max")
    if not text:
        return None
    fields = text.split()
    if fields[0] == "max":
        return None
    try:
        q = int(fields[0])
        p = int(fields[1]) if len(fields) > 1 else 100_000
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def _memory_limit(folder: Path, name: str) -> int | None:
    text = _read(folder / name)
    if not text or text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return value if 0 < value < _UNLIMITED_BYTES else None


def cgroup_limits(
    root: str | os.PathLike[str] = DEFAULT_CGROUP_ROOT,
    *,
    self_cgroup: str | os.PathLike[str] = DEFAULT_SELF_CGROUP,
) -> CgroupLimits:
    """Read the CPU quota and memory limit of this process's cgroup (v1 or v2).

    ``root`` is where the cgroup file systems are mounted and ``self_cgroup`` the file that
    names this process's cgroups (tests pass a tree of their own). In hybrid layouts the
    controllers mounted as v1 win. Outside Linux, or with nothing readable, every field is
    ``None``.
    """
    base = Path(root)
    v2_path, v1_paths = _self_cgroups(Path(self_cgroup))
    version: int | None = None
    cpu_quota: float | None = None
    memory: int | None = None
    cpu_at: str | None = None
    memory_at: str | None = None

    cpu_dirs = (base / n for n in ("cpu,cpuacct", "cpu", "cpuacct,cpu"))
    cpu_v1 = next((d for d in cpu_dirs if (d / "cpu.cfs_quota_us").exists()), None)
    mem_v1 = base / "memory" if (base / "memory" / "memory.limit_in_bytes").exists() else None
    unified = (base / "cgroup.controllers").exists()

    if cpu_v1 is not None:
        version = 1
        chain = _chain(cpu_v1, v1_paths.get("cpu"))
        cpu_quota = _smallest(_v1_quota(f) for f in chain)
        cpu_at = str(chain[0])
    elif unified:
        version = 2
        chain = _chain(base, v2_path)
        cpu_quota = _smallest(_v2_quota(f) for f in chain)
        cpu_at = str(chain[0])
    if mem_v1 is not None:
        version = version or 1
        chain = _chain(mem_v1, v1_paths.get("memory"))
        found = _smallest(_memory_limit(f, "memory.limit_in_bytes") for f in chain)
        memory = None if found is None else int(found)
        memory_at = str(chain[0])
    elif unified:
        version = version or 2
        chain = _chain(base, v2_path)
        found = _smallest(_memory_limit(f, "memory.max") for f in chain)
        memory = None if found is None else int(found)
        memory_at = str(chain[0])
    return CgroupLimits(version, cpu_quota, memory, cpu_at, memory_at)


def cgroup_cpu_quota_cores() -> float | None:
    """This process's cgroup CPU quota in cores (``docker run --cpus 1.5`` gives 1.5);
    ``None`` when there is no quota or no cgroup to read."""
    return cgroup_limits().cpu_quota_cores


def affinity() -> list[int] | None:
    """The CPUs this process may run on (``taskset -p``); ``None`` where the OS cannot tell."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    try:
        return sorted(psutil.Process().cpu_affinity() or [])
    except (AttributeError, psutil.Error, OSError):
        return None


def usable_cores(*, limits: CgroupLimits | None = None) -> float:
    """How many cores this process can keep busy: its affinity, capped by a cgroup quota.

    ``docker run --cpus 1.5`` on an 8-core host gives 1.5; with no quota it is the number
    of CPUs in the affinity mask (else ``os.cpu_count()``).
    """
    cpus = affinity()
    cores = float(len(cpus)) if cpus else float(os.cpu_count() or 1)
    quota = (limits or cgroup_limits()).cpu_quota_cores
    return min(cores, quota) if quota else cores


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
    text = _read(Path("/proc/1/cgroup")) or ""
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
        display = (_read(entry / "class") or "").startswith("0x03")
        if display and _read(entry / "vendor") == "0x10de":
            found.append(entry.name)
    return found


def _os_name() -> str:
    if sys.platform.startswith("linux"):
        for line in (_read(Path("/etc/os-release")) or "").splitlines():
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
    info: dict[str, str] = {}
    for line in (_read(Path("/proc/cpuinfo")) or "").splitlines():
        if not line.strip():
            if info:
                break
            continue
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    return info


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
