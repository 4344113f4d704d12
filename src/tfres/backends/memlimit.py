"""Memory of a process tree, read fast, and hard memory limits through cgroups.

:class:`TreeMemory` is what the memory budget's watchdog reads many times a second: the RSS
of a process and its descendants (~10 us per process, from ``/proc/PID/statm``), and PSS on
demand (~2-5 ms for a 1 GB TensorFlow process, from ``smaps_rollup``), which counts pages
shared between processes once instead of once per process.

:class:`HardLimit` puts a process into a cgroup of its own with a memory limit, where the
kernel allows it:

- **cgroup v2**: a writable cgroup whose ``cgroup.subtree_control`` has ``memory`` (ours
  when we are the root of a cgroup namespace, else our parent, as under systemd user
  delegation): a new child cgroup gets ``memory.high`` (the kernel throttles and reclaims
  above it) and ``memory.max`` (the hard ceiling), and ``memory.swap.max = 0``;
- **cgroup v1**: a cgroup nested in ours in the memory hierarchy (so our own limits still
  apply) with ``memory.limit_in_bytes`` and the OOM killer disabled (``memory.oom_control``):
  at the ceiling the process waits instead of being killed, and the watchdog ends it;
- **systemd-run**: ``systemd-run --scope -p MemoryMax=...`` wraps the command before it
  starts (:func:`systemd_scope_command`), where a systemd manager is reachable.

The cgroup is removed when the limit is released; leftovers of a tfres that was killed are
swept the next time (``tfres-<pid>`` folders whose pid is gone and that hold no process).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psutil

__all__ = [
    "MemoryReading",
    "TreeMemory",
    "HardLimit",
    "memory_ceiling",
    "host_oom_kills",
    "systemd_scope_command",
    "CGROUP_ROOT",
]

log = logging.getLogger("tfres")

CGROUP_ROOT = Path("/sys/fs/cgroup")
_PREFIX = "tfres-"


# -- reading ------------------------------------------------------------------------------
@dataclass(frozen=True)
class MemoryReading:
    """The memory of a process tree at one instant."""

    rss_bytes: int
    processes: int
    pids: tuple[int, ...] = ()


class TreeMemory:
    """RSS (and, on demand, PSS) of process ``pid`` and all its descendants.

    Descendants are looked for every ``rescan_seconds`` and whenever one exits. A root
    process that is gone gives readings with ``processes == 0``.
    """

    def __init__(self, pid: int | None = None, *, rescan_seconds: float = 0.25) -> None:
        self.pid = os.getpid() if pid is None else int(pid)
        self.rescan_seconds = rescan_seconds
        self._procs: dict[int, psutil.Process] = {}
        self._scanned_at: float | None = None
        try:
            self._root: psutil.Process | None = psutil.Process(self.pid)
        except psutil.Error:
            self._root = None

    def _rescan(self, now: float) -> None:
        self._scanned_at = now
        if self._root is None:
            self._procs = {}
            return
        try:
            kids = self._root.children(recursive=True)
        except psutil.Error:
            kids = []
        fresh = {self.pid: self._root}
        for kid in kids:
            fresh[kid.pid] = self._procs.get(kid.pid) or kid
        self._procs = fresh

    def read(self, now: float) -> MemoryReading:
        """The tree's summed RSS; ``now`` is a monotonic time for the rescan schedule."""
        if self._scanned_at is None or now - self._scanned_at >= self.rescan_seconds:
            self._rescan(now)
        rss = 0
        seen: list[int] = []
        gone = False
        for pid, proc in list(self._procs.items()):
            try:
                rss += proc.memory_info().rss
                seen.append(pid)
            except psutil.Error:
                gone = True
        if gone:
            self._scanned_at = None
        return MemoryReading(rss_bytes=rss, processes=len(seen), pids=tuple(seen))

    def pss_bytes(self) -> int | None:
        """The tree's summed PSS, or None where the OS cannot tell (no smaps, not ours)."""
        total = 0
        for proc in list(self._procs.values()):
            try:
                info = proc.memory_full_info()
            except (psutil.NoSuchProcess, psutil.ZombieProcess):
                continue
            except (psutil.AccessDenied, OSError):
                return None
            pss = getattr(info, "pss", None)
            if pss is None:
                return None
            total += pss
        return total


def memory_ceiling() -> tuple[int, str]:
    """The most memory this process tree may use: ``(bytes, "RAM" or "cgroup memory limit")``."""
    total = int(psutil.virtual_memory().total)
    try:
        from tfres.backends.host import cgroup_limits

        cgroup = cgroup_limits().memory_limit_bytes
    except Exception as err:  # an unreadable cgroup leaves the RAM as the ceiling
        log.debug("cgroup limit unreadable: %s", err)
        cgroup = None
    if cgroup is not None and cgroup < total:
        return int(cgroup), "cgroup memory limit"
    return total, "RAM"


def host_oom_kills() -> int | None:
    """How many processes the kernel's OOM killer has ended since boot (``/proc/vmstat``).

    None where the kernel does not count them (before Linux 4.13, not Linux). A rise during
    a run that ended by SIGKILL is the evidence that the OOM killer ended it.
    """
    try:
        with open("/proc/vmstat") as fh:
            for line in fh:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


# -- hard limits --------------------------------------------------------------------------
def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _write(path: Path, value: str) -> None:
    with open(path, "w") as fh:
        fh.write(value)


def _own_cgroups(pid: int) -> tuple[str | None, str | None]:
    """(v2 path, v1 memory path) of ``pid`` from ``/proc/PID/cgroup``."""
    v2 = v1 = None
    for line in (_read(Path(f"/proc/{pid}/cgroup")) or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2 = parts[2]
        elif "memory" in parts[1].split(","):
            v1 = parts[2]
    return v2, v1


def _sweep(parent: Path) -> None:
    """Remove empty ``tfres-<pid>`` cgroups left by a tfres that is gone."""
    try:
        entries = list(parent.glob(_PREFIX + "*"))
    except OSError:
        return
    for folder in entries:
        owner = folder.name[len(_PREFIX) :].split("-")[0]
        if owner.isdigit() and psutil.pid_exists(int(owner)):
            continue
        if not _read(folder / "cgroup.procs"):
            try:
                folder.rmdir()
            except OSError:
                pass


def _write_quietly(path: Path, value: int) -> None:
    try:
        _write(path, str(value))
    except OSError:
        pass


def _write_limits(folder: Path, mechanism: str, high_bytes: int, max_bytes: int) -> None:
    if mechanism == "cgroup-v2":
        _write(folder / "memory.high", str(high_bytes))
        _write(folder / "memory.max", str(max_bytes))
        if (folder / "memory.swap.max").exists():
            _write(folder / "memory.swap.max", "0")
        return
    _write(folder / "memory.limit_in_bytes", str(max_bytes))
    if (folder / "memory.memsw.limit_in_bytes").exists():
        try:  # no escape into swap, where the kernel accounts it
            _write(folder / "memory.memsw.limit_in_bytes", str(max_bytes))
        except OSError:
            pass
    _write(folder / "memory.oom_control", "1")


class HardLimit:
    """A cgroup with a memory ceiling for one process tree; see the module docstring.

    ``apply(pid, high_bytes, max_bytes)`` returns the mechanism used (``"cgroup-v2"``,
    ``"cgroup-v1"``) or None with :attr:`reason` saying why none could be used;
    ``prepare(...)`` then ``command(argv)`` puts a command in it from its first instruction.
    ``root`` is where cgroup file systems are mounted (tests pass a folder of their own).
    """

    def __init__(
        self, *, root: str | os.PathLike[str] = CGROUP_ROOT, owner: int | None = None
    ) -> None:
        self.root = Path(root)
        self.owner = os.getpid() if owner is None else owner
        self.path: Path | None = None
        self.mechanism: str | None = None
        self.reason: str | None = None
        self.max_bytes: int | None = None
        self.high_bytes: int | None = None

    def _candidates(self, pid: int) -> list[tuple[str, Path]]:
        v2, v1 = _own_cgroups(self.owner)
        found: list[tuple[str, Path]] = []
        unified = self.root if (self.root / "cgroup.controllers").exists() else None
        if unified is None and (self.root / "unified" / "cgroup.controllers").exists():
            unified = self.root / "unified"
        if unified is not None and v2 is not None:
            here = unified / v2.lstrip("/")
            for folder in (here, here.parent):
                controls = (_read(folder / "cgroup.subtree_control") or "").split()
                if "memory" in controls and os.access(folder, os.W_OK):
                    found.append(("cgroup-v2", folder))
                    break
        memory = self.root / "memory"
        if v1 is not None and (memory / "memory.limit_in_bytes").exists():
            here = memory / v1.lstrip("/")
            if here.is_dir() and os.access(here, os.W_OK):
                found.append(("cgroup-v1", here))
        return found

    def apply(self, pid: int, *, high_bytes: int, max_bytes: int) -> str | None:
        """Move ``pid`` (and what it starts later) into a new cgroup with these limits."""
        how = self.prepare(high_bytes=high_bytes, max_bytes=max_bytes, name=str(pid))
        if how is None or self.path is None:
            return None
        try:
            _write(self.path / "cgroup.procs", str(pid))
        except OSError as err:
            self.reason = f"{how} at {self.path}: {err.strerror or err}"
            self.release()
            self.mechanism = None
            return None
        return how

    def prepare(self, *, high_bytes: int, max_bytes: int, name: str | None = None) -> str | None:
        """Make the cgroup with its limits, with no process in it yet (see :meth:`command`)."""
        candidates = self._candidates(self.owner)
        if not candidates:
            self.reason = (
                "no writable cgroup with the memory controller (cgroup v2 needs a delegated "
                "subtree, v1 a writable memory cgroup)"
            )
            return None
        errors = []
        for mechanism, parent in candidates:
            _sweep(parent)
            folder = parent / f"{_PREFIX}{self.owner}-{name or os.urandom(4).hex()}"
            try:
                folder.mkdir(exist_ok=True)
                _write_limits(folder, mechanism, high_bytes, max_bytes)
            except OSError as err:
                errors.append(f"{mechanism} at {folder}: {err.strerror or err}")
                self._remove(folder)
                continue
            self.path, self.mechanism, self.max_bytes = folder, mechanism, max_bytes
            self.high_bytes = high_bytes
            return mechanism
        self.reason = "; ".join(errors)
        return None

    def command(self, command: list[str]) -> list[str]:
        """``command`` started inside the prepared cgroup: it joins it before ``exec``, so
        nothing it allocates or starts, however early, is outside the limit."""
        if self.path is None:
            return command
        join = 'echo $$ > "$0" && exec "$@"'
        return ["/bin/sh", "-c", join, str(self.path / "cgroup.procs"), *command]

    def under_oom(self) -> bool:
        """Whether the tree is waiting at the ceiling (v1 with the OOM killer disabled)."""
        if self.path is None or self.mechanism != "cgroup-v1":
            return False
        text = _read(self.path / "memory.oom_control") or ""
        return "under_oom 1" in text

    def oom_kills(self) -> int | None:
        """How many processes the OOM killer ended in this cgroup, None if unknown."""
        if self.path is None:
            return None
        name = "memory.events" if self.mechanism == "cgroup-v2" else "memory.oom_control"
        for line in (_read(self.path / name) or "").splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return None

    def usage_bytes(self) -> int | None:
        """The cgroup's charged memory (anonymous memory plus page cache), None if unknown."""
        if self.path is None:
            return None
        name = "memory.current" if self.mechanism == "cgroup-v2" else "memory.usage_in_bytes"
        text = _read(self.path / name)
        return int(text) if text and text.isdigit() else None

    def raise_to(self, max_bytes: int) -> None:
        """Move the ceiling (up or down; v1 keeps ``memsw`` >= the limit in either order)."""
        if self.path is None or max_bytes == self.max_bytes:
            return
        name = "memory.max" if self.mechanism == "cgroup-v2" else "memory.limit_in_bytes"
        memsw = self.path / "memory.memsw.limit_in_bytes"
        up = self.max_bytes is None or max_bytes > self.max_bytes
        try:
            if self.mechanism == "cgroup-v2":
                _write(self.path / "memory.high", str(min(max_bytes, self.high_bytes or max_bytes)))
            elif up and memsw.exists():
                _write_quietly(memsw, max_bytes)
            _write(self.path / name, str(max_bytes))
            if self.mechanism == "cgroup-v1" and not up and memsw.exists():
                _write_quietly(memsw, max_bytes)
            self.max_bytes = max_bytes
        except OSError as err:  # below what is in use (EBUSY): the watchdog acts instead
            log.debug("could not move the cgroup limit at %s: %s", self.path, err)

    def release(self) -> None:
        """Remove the cgroup (once its processes are gone; a live one stays in place)."""
        if self.path is not None:
            self._remove(self.path)
            self.path = None

    def _remove(self, folder: Path) -> None:
        try:
            folder.rmdir()  # a cgroup folder goes with rmdir even with its control files
        except FileNotFoundError:
            pass
        except OSError as err:
            if self.root.resolve() != CGROUP_ROOT:  # a tree of test data: plain files
                shutil.rmtree(folder, ignore_errors=True)
            else:
                log.debug("could not remove cgroup %s: %s", folder, err)


def systemd_scope_command(
    command: list[str], *, high_bytes: int, max_bytes: int
) -> tuple[list[str] | None, str]:
    """``command`` wrapped in ``systemd-run --scope`` with the limits, or (None, why not).

    The user manager (``--user``) is used when we are not root. Checks that a manager answers
    (``systemctl [--user] is-system-running``) before offering the wrapper.
    """
    if shutil.which("systemd-run") is None or shutil.which("systemctl") is None:
        return None, "systemd-run is not installed"
    user = ["--user"] if os.geteuid() != 0 else []
    try:
        probe = subprocess.run(
            ["systemctl", *user, "is-system-running"], capture_output=True, text=True, timeout=2
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return None, f"systemctl did not answer ({err})"
    state = probe.stdout.strip()
    if state not in ("running", "degraded", "starting"):
        return (
            None,
            f"no systemd manager reachable ({(probe.stderr or state).strip() or 'no answer'})",
        )
    wrapper = ["systemd-run", *user, "--scope", "--quiet", "--collect"]
    wrapper += ["-p", f"MemoryHigh={high_bytes}", "-p", f"MemoryMax={max_bytes}"]
    wrapper += ["-p", "MemorySwapMax=0", "--"]
    return wrapper + list(command), "systemd-run"
