"""The supervisor of ``tfres run``: the kill ladder, process groups, signals, how a run ended.

Real processes and real signals; the clock that drives the grace is a fake one, so no test
waits out a grace period in real time.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from fakes import FakeClock
from tfres.backends.signals import StopLadder, group_alive, new_group_options
from tfres.record import Record
from tfres.watch.command import watch
from tfres.watch.supervisor import Supervisor, describe_end

IGNORES_TERM = (
    "import pathlib, signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "pathlib.Path(sys.argv[1]).write_text('')\n"
    "time.sleep(60)\n"
)


def wait_for(path: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


def start(code: str, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code, *args], **new_group_options())


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_the_ladder_kills_after_the_grace_on_its_clock(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    proc = start(IGNORES_TERM, str(ready))
    try:
        wait_for(ready)
        clock = FakeClock()
        ladder = StopLadder(proc.pid, grace_seconds=10, clock=clock)
        assert ladder.terminate() is True
        assert ladder.terminate() is False  # once
        clock.advance(9.9)
        assert ladder.poll() is False
        time.sleep(0.2)
        assert proc.poll() is None  # SIGTERM ignored, the grace not over
        clock.advance(0.1)
        assert ladder.poll() is True and ladder.killed
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()


TREE = (
    "import multiprocessing as mp, pathlib, subprocess, sys, time\n"
    "def work(_):\n"
    "    time.sleep(60)\n"
    "if __name__ == '__main__':\n"
    "    sh = subprocess.Popen(['sh', '-c', 'sleep 61; echo done'])\n"
    "    ctx = mp.get_context(sys.argv[2])\n"
    "    workers = [ctx.Process(target=work, args=(i,)) for i in range(2)]\n"
    "    for w in workers: w.start()\n"
    "    time.sleep(0.2)\n"
    "    pids = [sh.pid, *(w.pid for w in workers)]\n"
    "    pathlib.Path(sys.argv[1]).write_text(' '.join(map(str, pids)))\n"
    "    time.sleep(60)\n"
)


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_sigterm_reaches_the_whole_tree(tmp_path: Path, context: str) -> None:
    pids_file = tmp_path / "pids"
    proc = start(TREE, str(pids_file), context)
    try:
        wait_for(pids_file)
        pids = [int(p) for p in pids_file.read_text().split()]
        StopLadder(proc.pid, grace_seconds=10).terminate()
        assert proc.wait(timeout=20) == -signal.SIGTERM
        deadline = time.monotonic() + 10
        while not all(gone(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert all(gone(p) for p in pids), [p for p in pids if not gone(p)]
    finally:
        if proc.poll() is None:
            proc.kill()


def test_what_the_command_leaves_in_its_group_is_stopped(tmp_path: Path) -> None:
    left = tmp_path / "left"
    code = (
        "import pathlib, subprocess, sys\n"
        "p = subprocess.Popen(['sleep', '62'])\n"
        "pathlib.Path(sys.argv[1]).write_text(str(p.pid))\n"
    )
    proc = start(code, str(left))
    assert proc.wait(timeout=20) == 0
    orphan = int(left.read_text())
    assert group_alive(proc.pid)
    clock = FakeClock()
    ladder = StopLadder(proc.pid, grace_seconds=5, clock=clock)
    assert ladder.finish_group(wait=lambda s: (clock.advance(s), time.sleep(s))) is True
    assert not group_alive(proc.pid)
    assert gone(orphan)
    assert ladder.finish_group() is False  # nothing left the second time


def test_a_second_signal_kills_at_once(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    proc = start(IGNORES_TERM, str(ready))
    try:
        wait_for(ready)
        sup = Supervisor(grace_seconds=3600, clock=FakeClock())
        sup.attach(proc)
        sup.on_signal(signal.SIGTERM, None)
        time.sleep(0.2)
        assert proc.poll() is None  # ignored, and the grace is an hour
        sup.on_signal(signal.SIGINT, None)
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
    assert sup.received == [
        "SIGTERM (passed on to the command)",
        "SIGINT again (SIGKILL to the command at once)",
    ]
    record = Record(kind="run")
    describe_end(record, sup, -signal.SIGKILL)
    assert record.status == "partial" and record.signal == "SIGKILL"
    assert "SIGINT again" in record.end_reason
    assert "oom_kills_during_run" not in record.extra  # tfres's own SIGKILL is no OOM


CHECKPOINTS = (
    "import pathlib, signal, sys, time\n"
    "signal.signal(signal.SIGUSR1, lambda n, f: pathlib.Path(sys.argv[2]).write_text('asked'))\n"
    "pathlib.Path(sys.argv[1]).write_text('')\n"
    "time.sleep(60)\n"  # asked, but it does not stop
)


def test_an_unanswered_stop_request_escalates_after_the_grace(tmp_path: Path) -> None:
    ready, asked = tmp_path / "ready", tmp_path / "asked"
    proc = start(CHECKPOINTS, str(ready), str(asked))
    try:
        wait_for(ready)
        clock = FakeClock()
        sup = Supervisor(grace_seconds=5, clock=clock)
        sup.attach(proc)
        sup.request_stop("memory budget", ask=signal.SIGUSR1)
        wait_for(asked)  # the command got the request...
        sup.poll()
        assert proc.poll() is None and not sup.ladder.started  # ...and time to act on it
        clock.advance(5)
        sup.poll()  # unanswered: SIGTERM now
        assert proc.wait(timeout=10) == -signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
    record = Record(kind="run")
    describe_end(record, sup, -signal.SIGTERM)
    assert record.status == "partial" and record.end_reason == "stopped by tfres: memory budget"


@pytest.mark.parametrize(
    ("returncode", "status", "words"),
    [
        (0, "ok", None),
        (3, "failed", "the command exited with status 3"),
        (-signal.SIGSEGV, "partial", "the command was ended by SIGSEGV"),
    ],
)
def test_the_end_in_words(returncode: int, status: str, words: str | None) -> None:
    record = Record(kind="run")
    describe_end(record, Supervisor(grace_seconds=1), returncode)
    assert record.status == status and record.end_reason == words


def test_a_sigkill_from_outside_records_the_oom_evidence(tmp_path: Path) -> None:
    result = watch(
        [sys.executable, "-c", "import os; os.kill(os.getpid(), 9)"], store=False, interval=0.05
    )
    assert result.exit_status == 137
    assert result.record.extra["oom_kills_during_run"] in (0, None)  # no OOM kill: kill -9
    assert "out_of_memory" not in [f["rule"] for f in result.record.findings]


def test_a_record_that_cannot_go_to_out_goes_beside_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "gone"
    folder.mkdir()
    # the command turns the output's folder into a file: --out was fine when it started
    code = f"import shutil; shutil.rmtree({str(folder)!r}); open({str(folder)!r}, 'w').close()"
    result = watch([sys.executable, "-c", code], store=False, out=folder / "r.json")
    assert result.exit_status == 0
    assert result.fallback_path == tmp_path / f"tfres-{result.record.id}.json"
    assert result.fallback_path.exists()
    assert result.store_error and f"written to {result.fallback_path} instead" in result.store_error


def test_a_bad_interval_is_refused_before_anything_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(ValueError, match=r"at least 0.01 seconds \(got 1e-09\)"):
        watch(["touch", str(marker)], interval=1e-9, store=False)
    assert not marker.exists()


def _voluntary_switches(tid: int) -> int:
    status = Path(f"/proc/self/task/{tid}/status").read_text()
    return int(status.split("voluntary_ctxt_switches:")[1].split()[0])


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="per-thread /proc")
def test_waiting_for_the_command_does_not_wake_the_main_thread() -> None:
    proc = subprocess.Popen(["sleep", "1"], **new_group_options())
    sup = Supervisor(grace_seconds=5)
    sup.attach(proc)
    tid = threading.get_native_id()
    before = _voluntary_switches(tid)
    assert sup.wait(0.05) == 0
    # one sleep until the exit (a polling loop at 0.05 s would switch ~20 times)
    assert _voluntary_switches(tid) - before <= 4


def test_a_stop_that_is_not_obeyed_is_killed_after_the_grace_while_tfres_waits(
    tmp_path: Path,
) -> None:
    ready = tmp_path / "ready"

    class StopWhenReady:
        def on_start(self, pid: int) -> None: ...

        def on_sample(self, sample: object) -> str | None:
            return "asked by a watcher" if ready.exists() else None

        def on_stop(self, record: Record) -> None: ...

    t0 = time.monotonic()
    result = watch(
        [sys.executable, "-c", IGNORES_TERM, str(ready)],
        store=False,
        interval=0.05,
        grace_seconds=0.5,
        watchers=[StopWhenReady()],
        instrument=False,
    )
    assert result.exit_status == 128 + signal.SIGKILL
    assert result.record.end_reason == "stopped by tfres: asked by a watcher (SIGKILL after 0.5 s)"
    assert time.monotonic() - t0 < 30
