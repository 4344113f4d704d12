"""Fault test of ``tfres run``: a job with worker processes, stopped at random moments.

Each case runs the real CLI on a job that starts ``multiprocessing`` workers (fork) and a
shell child, then ends it by SIGINT, SIGTERM or SIGHUP sent to tfres, two quick SIGTERMs, or
the memory budget, at a moment drawn from a seeded generator (sometimes before the workers
exist, sometimes while they work). Every time: tfres exits with the code a shell would show
(130, 143, 129; 137 when a job that ignores SIGTERM gets a second one), the record is saved
and says why, and no process of the job is left.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tfres.store import Store

JOB = """\
import multiprocessing as mp, os, pathlib, subprocess, sys, time
out = pathlib.Path(sys.argv[1])
(out / "started").write_text("")
def work(i):
    x = 0
    while True:  # a worker busy with its share
        x += sum(range(10_000)); time.sleep(0.01)
if __name__ == "__main__":
    ctx = mp.get_context("fork")
    workers = [ctx.Process(target=work, args=(i,)) for i in range(2)]
    for w in workers: w.start()
    sh = subprocess.Popen(["sh", "-c", "sleep 63; echo done"])
    if os.environ.get("IGNORE_TERM"):  # a job that will not stop on SIGTERM
        import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pids = [os.getpid(), sh.pid, *(w.pid for w in workers)]
    (out / "pids").write_text(" ".join(map(str, pids)))
    hog = []
    for _ in range(3000):
        if os.environ.get("GROW"):
            hog.append(b"x" * (4 * 2**20))  # 200 MiB/s: the budget must stop it
        time.sleep(0.02)
"""

#: (how it is stopped, tfres's exit status)
CASES = [
    ("SIGINT", 128 + signal.SIGINT),
    ("SIGTERM", 128 + signal.SIGTERM),
    ("SIGHUP", 128 + signal.SIGHUP),
    ("SIGTERM twice", 128 + signal.SIGKILL),
    ("budget", 128 + signal.SIGTERM),
]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _wait_for(path: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


@pytest.mark.parametrize(("how", "expected"), CASES)
def test_a_job_with_workers_stopped_at_a_random_moment(
    how: str, expected: int, tmp_path: Path, store_path: Path
) -> None:
    rng = random.Random(f"tfres-faults-{how}")
    delay = rng.uniform(0.0, 1.0)  # after the job started: before or after its workers exist
    job = tmp_path / "job.py"
    job.write_text(JOB)
    env = dict(os.environ)
    args = [sys.executable, "-m", "tfres", "run", "--interval", "0.05"]
    if how == "SIGTERM twice":
        env["IGNORE_TERM"] = "1"
    if how == "budget":
        env["GROW"] = "1"
        args += ["--memory-budget", "300MiB"]
    tfres = subprocess.Popen(
        [*args, "--", sys.executable, str(job), str(tmp_path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # away from the test runner's own group and terminal
    )
    try:
        _wait_for(tmp_path / "pids" if how == "SIGTERM twice" else tmp_path / "started")
        if how != "budget":
            time.sleep(delay)
            sig = signal.SIGTERM if how == "SIGTERM twice" else getattr(signal, how)
            tfres.send_signal(sig)
            if how == "SIGTERM twice":
                time.sleep(0.3)  # the job ignores the first; the second ends it at once
                tfres.send_signal(sig)
        _, err = tfres.communicate(timeout=60)
    finally:
        if tfres.poll() is None:
            tfres.kill()
    assert tfres.returncode == expected, err.decode()
    pids_file = tmp_path / "pids"
    pids = [int(p) for p in pids_file.read_text().split()] if pids_file.exists() else []
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [p for p in pids if _alive(p)], f"left behind after {how} at {delay:.2f} s"
    with Store(store_path) as store:
        (run,) = store.runs()
        record = store.get(run.id)
    assert record.status == "partial"
    if how == "budget":
        assert "memory budget 300.0 MiB" in record.end_reason
        assert record.control["budget"]["peak_bytes"] <= 300 * 2**20
    else:
        assert f"tfres received {how.split()[0]}" in record.end_reason
