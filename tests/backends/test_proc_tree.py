"""tfres.backends.proc_tree and proc_files: real processes, real /proc."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tfres.backends.host_now import HostReader
from tfres.backends.proc_files import PROC_AVAILABLE, NewPids, ProcFiles
from tfres.backends.proc_tree import ProcessTree

linux_only = pytest.mark.skipif(not PROC_AVAILABLE, reason="Linux /proc only")

# three workers of 48 MiB each that live 0.5 s, started together, then the parent waits
WORKERS = textwrap.dedent(
    """
    import multiprocessing as mp, time
    def work():
        block = bytearray(48 * 2**20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(0.5)
    if __name__ == "__main__":
        time.sleep(0.3)
        ps = [mp.get_context("fork").Process(target=work) for _ in range(3)]
        for p in ps: p.start()
        for p in ps: p.join()
        time.sleep(0.3)
    """
)

# a child that burns ~0.4 s of CPU and is gone (reaped) before anyone could sample it
BURN_AND_EXIT = textwrap.dedent(
    """
    import os, time
    pid = os.fork()
    if pid == 0:
        end = time.process_time() + 0.4
        while time.process_time() < end:
            pass
        os._exit(0)
    os.waitpid(pid, 0)
    print("reaped", flush=True)
    time.sleep(30)
    """
)


@linux_only
def test_proc_files_reread_fresh_figures_and_notice_an_exit():
    files = ProcFiles()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        first = files.read(f"/proc/{child.pid}/stat")
        assert first.startswith(str(child.pid).encode())
        child.kill()
        child.wait()
        with pytest.raises(ProcessLookupError):  # the fd is bound to the old process
            files.read(f"/proc/{child.pid}/stat")
    finally:
        child.kill()
        files.close()


@linux_only
def test_new_pids_lists_what_was_created_since_the_last_call():
    new = NewPids(ProcFiles())
    assert new.since_last() is None  # the first call: a full scan is needed
    child = subprocess.Popen(["true"])
    child.wait()
    assert child.pid in (new.since_last() or [])


@linux_only
def test_a_new_child_is_in_the_next_reading_without_a_full_scan():
    tree = ProcessTree(os.getpid())
    tree.read()
    scans = tree.full_scans
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in tree.read().pids
        assert tree.full_scans == scans
    finally:
        child.kill()
        child.wait()


@linux_only
def test_cpu_of_a_child_reaped_between_readings_still_counts():
    proc = subprocess.Popen([sys.executable, "-c", BURN_AND_EXIT], stdout=subprocess.PIPE)
    try:
        tree = ProcessTree(proc.pid)
        first = tree.read()
        assert proc.stdout is not None and proc.stdout.readline() == b"reaped\n"
        last = tree.read()
    finally:
        proc.kill()
        proc.wait()
    # never seen alive, but its 0.4 s are in its parent's cutime, read with the parent
    assert last.cpu_seconds - first.cpu_seconds >= 0.35


def test_psutil_fallback_sees_children_too():
    tree = ProcessTree(os.getpid(), rescan_seconds=0.0, use_proc=False)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in tree.read().pids
        child.kill()
        child.wait()
        assert child.pid not in tree.read().pids
    finally:
        child.kill()


def test_three_workers_that_live_half_a_second_are_in_the_records_peak(tmp_path: Path):
    script = tmp_path / "workers.py"
    script.write_text(WORKERS)
    out = tmp_path / "run.json"
    tfres = Path(sys.executable).with_name("tfres")
    started = time.monotonic()
    subprocess.run(
        [str(tfres), "run", "--no-store", "--out", str(out), "--interval", "0.1", "--",
         sys.executable, str(script)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert time.monotonic() - started < 60
    record = json.loads(out.read_text())
    samples = record["samples"]
    peak = max(s["process_rss_bytes"] or 0 for s in samples)
    assert max(s["process_count"] for s in samples) >= 4  # the parent and 3 workers
    assert peak >= 3 * 48 * 2**20


class _CountedFiles(ProcFiles):
    """Real /proc files that count which were read."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []

    def read(self, path: str) -> bytes:
        self.reads.append(path)
        return super().read(path)


@linux_only
def test_new_pids_are_not_looked_for_while_the_fork_counter_stands_still():
    host = HostReader()
    files = _CountedFiles()
    new = NewPids(files)
    host.read()
    assert host.forks is not None
    assert new.since_last(host.forks) is None  # the first call reads /proc/loadavg
    files.reads.clear()
    assert new.since_last(host.forks) == []  # nothing created: nothing read
    assert files.reads == []
    child = subprocess.Popen(["true"])
    child.wait()
    host.read()  # the counter has moved: the new pid is found
    assert child.pid in (new.since_last(host.forks) or [])
    assert files.reads == ["/proc/loadavg"]


@linux_only
def test_a_child_is_seen_in_the_next_reading_with_the_fork_counter():
    host = HostReader()
    tree = ProcessTree(os.getpid(), forks=lambda: host.forks)
    host.read()
    tree.read()
    host.read()
    tree.read()  # the counter stands still (or not): no child yet either way
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        host.read()  # as a sample does: the host first, then the tree
        assert child.pid in tree.read().pids
    finally:
        child.kill()
        child.wait()


@linux_only
def test_new_pids_use_loadavg_while_the_fork_counter_is_not_read():
    files = _CountedFiles()
    new = NewPids(files)
    assert new.since_last(None) is None  # the first call: a full scan is due
    files.reads.clear()
    child = subprocess.Popen(["true"])
    child.wait()
    assert child.pid in (new.since_last(None) or [])  # no count given: /proc/loadavg read
    assert files.reads == ["/proc/loadavg"]


@linux_only
def test_a_fork_count_equal_to_the_last_one_given_means_nothing_new_since_then():
    host = HostReader()
    files = _CountedFiles()
    new = NewPids(files)
    host.read()
    counted = host.forks
    assert new.since_last(counted) is None
    new.since_last(None)  # /proc/loadavg: what other users started meanwhile is theirs
    files.reads.clear()
    # the count is the same as the last one given, two calls back: nothing was created
    # since it was read, so nothing since the call in between either
    assert new.since_last(counted) == []
    assert files.reads == []


@linux_only
def test_a_child_is_seen_in_the_next_reading_while_host_cpu_is_carried():
    clock_now = [0.0]
    host = HostReader(cpu_every_seconds=0.1, clock=lambda: clock_now[0])
    tree = ProcessTree(os.getpid(), forks=lambda: host.forks)
    host.read()
    tree.read()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        clock_now[0] = 0.01  # inside the CPU span: /proc/stat is not read, no fork count
        reading = host.read()
        assert not reading.cpu_read and host.forks is None
        assert child.pid in tree.read().pids
    finally:
        child.kill()
        child.wait()


@linux_only
def test_uss_and_pss_from_smaps_rollup_match_psutil():
    import psutil

    child = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.2)  # exec'd: its mappings stand still
        reading = ProcessTree(child.pid, full_memory=True).read()
        full = psutil.Process(child.pid).memory_full_info()
        assert reading.uss_bytes == full.uss and reading.pss_bytes == full.pss
        assert reading.uss_bytes and reading.uss_bytes > 0
    finally:
        child.kill()
        child.wait()
