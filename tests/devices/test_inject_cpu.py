"""_tfres_cpu: each thread's CPU by its own clock, the threads a plain call runs on, and worker
processes' CPU."""

from __future__ import annotations

import hashlib
import multiprocessing
import threading
import time
from multiprocessing.connection import Connection

from tfres.devices.inject import _tfres_cpu


def _spin(stop: threading.Event) -> None:
    data = bytes(2**20)
    while not stop.is_set():
        hashlib.sha256(data).digest()  # native work, no GIL held


def test_each_threads_cpu_is_read_by_its_own_clock() -> None:
    before = _tfres_cpu.cpu_seconds()
    assert before and threading.get_native_id() in before
    assert _tfres_cpu.since(None) is None
    stop = threading.Event()
    burner = threading.Thread(target=_spin, args=(stop,))
    burner.start()
    time.sleep(0.2)
    # a thread started since ``before``: all of its CPU; the reader slept
    during = _tfres_cpu.since(before)
    stop.set()
    burner.join()
    assert during is not None and 0.02 < during[burner.native_id] <= 0.25
    assert during[threading.get_native_id()] < 0.05


def test_the_call_alones_threads_are_those_that_ran_a_share_of_its_cpu() -> None:
    readings = [{1: 0.010, 2: 0.004, 3: 0.0001, 4: 0.0}, None, {1: 0.012, 2: 0.003, 5: 0.0004}]
    # 3 ran 0.0001 of 0.0295 s (0.3%), 5 ran 1.4%: under CALL_THREAD_SHARE (2%); 4 never ran
    assert _tfres_cpu.call_threads(readings) == {1, 2}
    assert _tfres_cpu.call_threads([None, {}]) is None
    # a pipeline refilling its buffer in the first of four calls only (6): not the call's,
    # however much it ran then
    first = {1: 0.010, 6: 0.030}
    later = [{1: 0.010, 6: 0.0} for _ in range(3)]
    assert _tfres_cpu.call_threads([first, *later]) == {1}
    assert _tfres_cpu.call_threads([first, first, *later[:2]]) == {1, 6}  # in half of them


def _burn(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_the_worker_processes_cpu_since_a_reading_is_what_they_ran() -> None:
    """A loop's call after a timed gap counts its pool's CPU beside it."""
    assert _tfres_cpu.workers_cpu_since(None) == 0.0  # not read
    worker = multiprocessing.get_context("fork").Process(target=_burn, args=(1.5,))
    worker.start()
    try:
        time.sleep(0.2)
        before = _tfres_cpu.workers_cpu_seconds()
        time.sleep(0.5)
        ran = _tfres_cpu.workers_cpu_since(before)
    finally:
        worker.join()
    # one busy process for 0.5 s: near 0.5 CPU seconds (2-core CI: > 0.2)
    assert 0.2 < ran <= 0.6


def _burn_cpu(seconds: float, ready: Connection, go: Connection) -> None:
    ready.send("ready")
    go.recv()
    end = time.process_time() + seconds  # its own CPU, not the wall: a busy CI core
    while time.process_time() < end:
        pass
    ready.send("done")
    go.recv()


def test_a_worker_processes_cpu_is_read_finer_than_procs_10_ms_ticks() -> None:
    """A window of 8 fast steps lasts about 25 ms: the workers' CPU over it is read by their
    CPU clocks, in nanoseconds, not in ``/proc``'s ticks (0, 10 or 20 ms for 15 ms run)."""
    ours, theirs = multiprocessing.Pipe()
    go_ours, go_theirs = multiprocessing.Pipe()
    worker = multiprocessing.get_context("fork").Process(
        target=_burn_cpu, args=(0.015, theirs, go_theirs)
    )
    worker.start()
    try:
        assert ours.recv() == "ready"
        before = _tfres_cpu.workers_cpu_seconds()
        go_ours.send("go")
        assert ours.recv() == "done"
        ran = _tfres_cpu.workers_cpu_since(before)
        go_ours.send("end")
    finally:
        worker.join()
    # 15 ms of its own CPU, and a pipe's send and receive around it
    assert 0.0145 < ran < 0.019
    assert _tfres_cpu.process_cpu_seconds(worker.pid) is None  # ended and reaped
