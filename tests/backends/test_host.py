"""tfres.backends.host: cgroup v1/v2 limits from real file trees, and host facts vs the OS."""

from __future__ import annotations

import os
import re
from pathlib import Path

import psutil
import pytest

from tfres.backends import host


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _self_cgroup(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "proc_self_cgroup"
    path.write_text(text)
    return path


# -- cgroup v2 -----------------------------------------------------------------------------
def test_v2_quota_and_memory_limit(tmp_path):
    root = tmp_path / "cg"
    _write(root, "cgroup.controllers", "cpuset cpu io memory pids")
    _write(root, "kubepods/pod1/cpu.max", "150000 100000")
    _write(root, "kubepods/pod1/memory.max", str(3 * 2**30))
    limits = host.cgroup_limits(root, self_cgroup=_self_cgroup(tmp_path, "0::/kubepods/pod1\n"))
    assert limits.version == 2
    assert limits.cpu_quota_cores == pytest.approx(1.5)
    assert limits.memory_limit_bytes == 3 * 2**30
    assert limits.cpu_path == str(root / "kubepods" / "pod1")


def test_v2_unlimited_is_none(tmp_path):
    root = tmp_path / "cg"
    _write(root, "cgroup.controllers", "cpu memory")
    _write(root, "cpu.max", "max 100000")
    _write(root, "memory.max", "max")
    limits = host.cgroup_limits(root, self_cgroup=_self_cgroup(tmp_path, "0::/\n"))
    assert limits.version == 2
    assert limits.cpu_quota_cores is None
    assert limits.memory_limit_bytes is None


def test_v2_the_tighter_ancestor_limit_applies(tmp_path):
    root = tmp_path / "cg"
    _write(root, "cgroup.controllers", "cpu memory")
    _write(root, "parent/cpu.max", "50000 100000")  # 0.5 core on the parent
    _write(root, "parent/memory.max", str(2**30))
    _write(root, "parent/child/cpu.max", "400000 100000")  # 4 cores asked by the child
    _write(root, "parent/child/memory.max", "max")
    limits = host.cgroup_limits(root, self_cgroup=_self_cgroup(tmp_path, "0::/parent/child\n"))
    assert limits.cpu_quota_cores == pytest.approx(0.5)
    assert limits.memory_limit_bytes == 2**30


def test_v2_container_namespace_root(tmp_path):
    """Inside a cgroup namespace /proc/self/cgroup says "/" and the mount is the container."""
    root = tmp_path / "cg"
    _write(root, "cgroup.controllers", "cpu memory")
    _write(root, "cpu.max", "200000 100000")
    _write(root, "memory.max", "536870912")
    limits = host.cgroup_limits(root, self_cgroup=_self_cgroup(tmp_path, "0::/\n"))
    assert (limits.cpu_quota_cores, limits.memory_limit_bytes) == (2.0, 512 * 2**20)


# -- cgroup v1 -----------------------------------------------------------------------------
V1_SELF = """\
12:memory:/docker/abc
11:cpu,cpuacct:/docker/abc
1:name=systemd:/docker/abc
0::/docker/abc
"""


def test_v1_quota_and_memory_limit(tmp_path):
    root = tmp_path / "cg"
    _write(root, "cpu,cpuacct/cpu.cfs_quota_us", "-1")
    _write(root, "cpu,cpuacct/cpu.cfs_period_us", "100000")
    _write(root, "cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000")
    _write(root, "cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000")
    _write(root, "memory/memory.limit_in_bytes", "9223372036854771712")  # "no limit"
    _write(root, "memory/docker/abc/memory.limit_in_bytes", str(4 * 2**30))
    limits = host.cgroup_limits(root, self_cgroup=_self_cgroup(tmp_path, V1_SELF))
    assert limits.version == 1
    assert limits.cpu_quota_cores == pytest.approx(2.5)
    assert limits.memory_limit_bytes == 4 * 2**30


def test_v1_no_limits_and_mount_without_the_path(tmp_path):
    """A container that bind-mounts its own cgroup at the root: the path is not below it."""
    root = tmp_path / "cg"
    _write(root, "cpu/cpu.cfs_quota_us", "-1")
    _write(root, "cpu/cpu.cfs_period_us", "100000")
    _write(root, "memory/memory.limit_in_bytes", "9223372036854771712")
    limits = host.cgroup_limits(root, self_cgroup=_self_cgroup(tmp_path, V1_SELF))
    assert limits.version == 1
    assert limits.cpu_quota_cores is None and limits.memory_limit_bytes is None
    # the container's own limits sit at the mount root
    _write(root, "cpu/cpu.cfs_quota_us", "200000")
    _write(root, "memory/memory.limit_in_bytes", str(2**30))
    limits = host.cgroup_limits(root, self_cgroup=_self_cgroup(tmp_path, V1_SELF))
    assert (limits.cpu_quota_cores, limits.memory_limit_bytes) == (2.0, 2**30)


def test_hybrid_layout_prefers_v1_controllers(tmp_path):
    root = tmp_path / "cg"
    _write(root, "unified/cgroup.controllers", "")
    _write(root, "cpu/cpu.cfs_quota_us", "50000")
    _write(root, "cpu/cpu.cfs_period_us", "100000")
    limits = host.cgroup_limits(root, self_cgroup=_self_cgroup(tmp_path, "1:cpu:/\n0::/\n"))
    assert limits.version == 1 and limits.cpu_quota_cores == pytest.approx(0.5)


def test_no_cgroup_at_all(tmp_path):
    limits = host.cgroup_limits(tmp_path / "missing", self_cgroup=tmp_path / "missing-file")
    assert limits == host.CgroupLimits()
    assert limits.to_dict()["version"] is None


def test_garbage_files_read_as_no_limit(tmp_path):
    root = tmp_path / "cg"
    _write(root, "cgroup.controllers", "cpu memory")
    _write(root, "cpu.max", "lots 100000")
    _write(root, "memory.max", "-")
    limits = host.cgroup_limits(root, self_cgroup=_self_cgroup(tmp_path, "0::/\n"))
    assert limits.cpu_quota_cores is None and limits.memory_limit_bytes is None


# -- the real host ---------------------------------------------------------------------
def _meminfo_kib(field: str) -> int | None:
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return None
    match = re.search(rf"^{field}:\s+(\d+) kB", text, re.M)
    return int(match.group(1)) if match else None


def test_memory_matches_proc_meminfo():
    mem = host.memory_facts()
    total_kib = _meminfo_kib("MemTotal")
    if total_kib is None:
        pytest.skip("no /proc/meminfo here")
    assert mem["total_bytes"] == total_kib * 1024
    available = _meminfo_kib("MemAvailable") * 1024
    # available moves while other work runs: within 5% of total
    assert abs(mem["available_bytes"] - available) < 0.05 * mem["total_bytes"]
    swap_total = _meminfo_kib("SwapTotal") * 1024
    assert mem["swap_total_bytes"] == swap_total
    assert mem["source"].startswith("psutil")


def test_cpu_matches_the_os():
    cpu = host.cpu_facts()
    assert cpu["logical_cores"] == os.cpu_count()
    assert cpu["affinity"] == sorted(os.sched_getaffinity(0))
    assert 0 < cpu["usable_cores"] <= len(cpu["affinity"])
    if cpu["cgroup_cpu_quota_cores"]:
        assert cpu["usable_cores"] == min(len(cpu["affinity"]), cpu["cgroup_cpu_quota_cores"])
    flags_line = next(
        (
            line
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("flags")
        ),
        None,
    )
    if flags_line is not None:
        flags = set(flags_line.split(":", 1)[1].split())
        assert cpu["isa_flags"] == {f: f in flags for f in ("avx2", "avx512f", "fma")}
    assert cpu["model"]
    assert "psutil" in cpu["source"]


def test_usable_cores_uses_the_quota(tmp_path):
    limits = host.CgroupLimits(version=2, cpu_quota_cores=0.5)
    assert host.usable_cores(limits=limits) == 0.5
    assert host.usable_cores(limits=host.CgroupLimits()) == float(len(os.sched_getaffinity(0)))


def test_host_facts():
    facts = host.host_facts()
    assert facts["hostname"] == os.uname().nodename
    assert facts["kernel"] == os.uname().release
    assert facts["in_container"] in (True, False)
    if facts["in_container"]:
        assert facts["in_container_evidence"]


def test_load_probe_sees_a_busy_process(python):
    import subprocess

    busy = subprocess.Popen([python, "-c", "while True: pass"])
    try:
        load = host.LoadProbe(window_seconds=0.5, top=50).start().finish()
    finally:
        busy.kill()
        busy.wait()
    assert load["window_seconds"] >= 0.5
    by_pid = {p["pid"]: p for p in load["top_cpu"]}
    assert busy.pid in by_pid and by_pid[busy.pid]["cpu_percent"] > 20
    assert os.getpid() not in by_pid  # the measuring process is left out
    rss = [p["rss_bytes"] for p in load["top_memory"]]
    assert rss == sorted(rss, reverse=True)
    assert all(p["pid"] != os.getpid() for p in load["top_memory"])


def test_load_probe_rejects_negative_window():
    with pytest.raises(ValueError, match="window_seconds"):
        host.LoadProbe(window_seconds=-1)


def test_nvidia_pci_devices_from_a_fake_bus(tmp_path):
    bus = tmp_path / "pci"
    _write(bus, "0000:00:02.0/vendor", "0x8086")
    _write(bus, "0000:00:02.0/class", "0x030000")
    _write(bus, "0000:3b:00.0/vendor", "0x10de")
    _write(bus, "0000:3b:00.0/class", "0x030200")  # 3D controller: a datacenter GPU
    _write(bus, "0000:3b:00.1/vendor", "0x10de")
    _write(bus, "0000:3b:00.1/class", "0x040300")  # its audio function: not a GPU
    assert host.nvidia_pci_devices(bus) == ["0000:3b:00.0"]
    assert host.nvidia_pci_devices(tmp_path / "none") is None


def test_real_quota_reader_is_consistent():
    assert host.cgroup_cpu_quota_cores() == host.cgroup_limits().cpu_quota_cores
    assert psutil.cpu_count() >= 1
