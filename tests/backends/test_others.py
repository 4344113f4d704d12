"""The other processes' CPU over a run: scripted listings for the arithmetic, the real
/proc and psutil readers against a real busy process."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from fakes import FakeClock
from tfres.backends.others import OtherProcesses, ProcessCpu, _read_psutil, read_processes


class Listing:
    """A scripted process listing: ``table[pid] = (ppid, name, cpu_seconds, started)``."""

    def __init__(self) -> None:
        self.table: dict[int, tuple[int, str, float, float]] = {}

    def set(self, pid: int, cpu: float, *, ppid: int = 1, name: str = "", started: float = 0.0):
        self.table[pid] = (ppid, name or f"p{pid}", cpu, started)

    def __call__(self) -> list[ProcessCpu]:
        return [ProcessCpu(pid, *row) for pid, row in self.table.items()]


def test_cpu_over_the_run_comes_from_the_first_and_last_scans():
    clock, listing = FakeClock(), Listing()
    others = OtherProcesses(reader=listing, clock=clock)
    listing.set(10, 500.0, name="yes")  # 500 s before the run: not counted
    listing.set(11, 3.0, name="idle")
    listing.set(12, 1.0, name="gone")
    others.scan()
    assert others.top() is None  # one scan tells nothing yet
    clock.advance(5.0)
    listing.set(10, 504.0, name="yes")
    listing.set(12, 3.5, name="gone")
    listing.set(13, 0.5, name="new")  # born during the run: counted from zero
    others.scan()
    clock.advance(5.0)
    listing.set(10, 509.0, name="yes")
    del listing.table[12]  # exited: keeps what it used while seen
    others.scan()
    assert others.top() == [
        {"pid": 10, "name": "yes", "cpu_percent": 90.0},
        {"pid": 12, "name": "gone", "cpu_percent": 25.0},
        {"pid": 13, "name": "new", "cpu_percent": 5.0},
    ]  # 11 stayed idle: not listed
    assert [p["pid"] for p in others.top(1)] == [10]
    assert others.scans == 3 and others.span_seconds == 10.0


def test_the_watched_tree_its_descendants_and_this_process_are_left_out():
    clock, listing = FakeClock(), Listing()
    others = OtherProcesses(reader=listing, clock=clock)
    me = os.getpid()
    for pid, ppid in ((100, 1), (101, 100), (102, 101), (200, 1), (me, 1)):
        listing.set(pid, 0.0, ppid=ppid)
    others.scan(exclude={100})
    clock.advance(1.0)
    for pid, ppid in ((100, 1), (101, 100), (102, 101), (200, 1), (me, 1)):
        listing.set(pid, 0.8, ppid=ppid)
    others.scan(exclude={100})
    assert [p["pid"] for p in others.top()] == [200]
    assert others.top(exclude={200}) == []


def test_a_reused_pid_is_a_new_process():
    clock, listing = FakeClock(), Listing()
    others = OtherProcesses(reader=listing, clock=clock)
    listing.set(7, 100.0, started=1.0)
    others.scan()
    clock.advance(2.0)
    listing.set(7, 0.4, started=2.0)  # pid 7 ended; a new process got its number
    others.scan()
    assert others.top() == [{"pid": 7, "name": "p7", "cpu_percent": 20.0}]


def test_scans_are_due_every_few_seconds_and_further_apart_when_slow():
    clock = FakeClock()

    def slow() -> list[ProcessCpu]:
        deadline = time.thread_time() + 0.02  # 20 ms of CPU: due every 20 s at 0.1%
        while time.thread_time() < deadline:
            pass
        return []

    fast = OtherProcesses(reader=list, clock=clock, every_seconds=3.0)
    assert fast.due()
    fast.scan()
    clock.advance(2.9)
    assert not fast.due()
    clock.advance(0.2)
    assert fast.due()
    spaced = OtherProcesses(reader=slow, clock=clock, every_seconds=3.0)
    spaced.scan()
    clock.advance(10.0)
    assert not spaced.due()
    clock.advance(15.0)
    assert spaced.due()


@pytest.mark.parametrize("reader", [read_processes, _read_psutil], ids=["proc", "psutil"])
def test_real_readers_see_a_busy_process(reader):
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        others = OtherProcesses(reader=reader)
        others.scan()
        time.sleep(0.6)
        others.scan()
        top = others.top(50) or []
        found = [p for p in top if p["pid"] == hog.pid]
        assert found and found[0]["cpu_percent"] > 30, top
        assert os.getpid() not in [p["pid"] for p in top]
    finally:
        hog.kill()
        hog.wait()
