"""The CPU quota and memory limit of this process's cgroup, in both layouts.

Containers are where users run, so both are read: cgroup v1 (``cpu.cfs_quota_us``/
``cpu.cfs_period_us``, ``memory.limit_in_bytes``) and v2 (``cpu.max``, ``memory.max``).
Linux only: elsewhere there is no cgroup and every limit is None. The cgroup root is a
parameter so tests can point it at a tree of their own.

    >>> cgroup_limits().cpu_quota_cores     # in `docker run --cpus 2`
    2.0
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["CgroupLimits", "cgroup_limits", "cgroup_cpu_quota_cores", "read_text"]

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


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None


def _self_cgroups(self_cgroup: Path) -> tuple[str | None, dict[str, str]]:
    """(the v2 path, {v1 controller: path}) from ``/proc/self/cgroup``."""
    v2: str | None = None
    v1: dict[str, str] = {}
    for line in (read_text(self_cgroup) or "").splitlines():
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
    quota, period = read_text(folder / "cpu.cfs_quota_us"), read_text(folder / "cpu.cfs_period_us")
    try:
        q, p = int(quota or ""), int(period or "")
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def _v2_quota(folder: Path) -> float | None:
    text = read_text(folder / "cpu.max")
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
    text = read_text(folder / name)
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
