"""The hook's reads and writes that keep the GIL (``_tfres_held``): the same bytes as
``os``'s calls, the same errors, and no other Python thread runs during them."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tfres.devices.child_env import INJECT_DIR

sys.path.insert(0, str(INJECT_DIR))
import _tfres_held as held  # noqa: E402

sys.path.remove(str(INJECT_DIR))

pytestmark = pytest.mark.parallel


def test_the_c_library_is_used_here() -> None:
    assert held._LIBC is not None  # Linux: otherwise the tests below test os's calls


def test_pread_reads_what_os_reads(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(range(256)) * 8)
    fd = os.open(path, os.O_RDONLY)
    try:
        for size, offset in ((10, 0), (100, 37), (512, 1800), (4096, 0), (5000, 3)):
            assert held.pread(fd, size, offset) == os.pread(fd, size, offset)
    finally:
        os.close(fd)


def test_write_appends_all_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        held.write(fd, b'{"a": 1}\n')
        held.write(fd, "é".encode() * 10_000 + b"\n")
    finally:
        os.close(fd)
    assert path.read_bytes() == b'{"a": 1}\n' + "é".encode() * 10_000 + b"\n"


def test_a_bad_descriptor_raises_oserror(tmp_path: Path) -> None:
    fd = os.open(tmp_path / "x", os.O_WRONLY | os.O_CREAT, 0o644)
    os.close(fd)
    with pytest.raises(OSError):
        held.pread(fd, 16)
    with pytest.raises(OSError):
        held.write(fd, b"lost")


def test_a_proc_file_reads_none_where_it_does_not_exist(tmp_path: Path) -> None:
    assert held.ProcFile(str(tmp_path / "missing")).read() is None
    if Path("/proc/self/statm").exists():
        text = held.ProcFile("/proc/self/statm").read()
        assert text is not None and len(text.split()) >= 2


@pytest.fixture
def busy_thread() -> Iterator[list[int]]:
    """A thread that runs Python, counting, until the test ends. It lets the GIL go now and
    then (``sleep(0)``), so the test's thread gets it; with a switch interval of 10 s it
    never makes the test's thread let it go, so it runs during a call only if that call
    let the GIL go itself."""
    count, stop = [0], threading.Event()

    def spin() -> None:
        while not stop.is_set():
            count[0] += 1
            if count[0] % 200 == 0:
                time.sleep(0)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        while count[0] == 0:
            time.sleep(0.001)
        yield count
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)


def _ran_during(count: list[int], call: Callable[[], object], tries: int = 5) -> int:
    """How many of ``tries`` calls the other thread counted during."""
    ran = 0
    for _ in range(tries):
        before = count[0]
        call()
        ran += count[0] != before
    return ran


def test_no_other_thread_runs_during_a_held_call(busy_thread: list[int], tmp_path: Path) -> None:
    # 64 MiB each way: milliseconds in the kernel, time enough for the other thread to wake
    # and run, had the GIL been let go
    big = b"x" * (64 << 20)
    path = tmp_path / "big.bin"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        assert _ran_during(busy_thread, lambda: held.write(fd, big)) == 0
        assert _ran_during(busy_thread, lambda: held.pread(fd, len(big), 0)) == 0
        # the control: os's calls let the GIL go, and the counting thread runs
        assert _ran_during(busy_thread, lambda: os.write(fd, big)) > 0
        assert _ran_during(busy_thread, lambda: os.pread(fd, len(big), 0)) > 0
    finally:
        os.close(fd)
