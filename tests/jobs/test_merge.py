from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

import synthetic as syn
from tfres.jobs.merge import (
    STRAGGLER_RATIO,
    JobReport,
    WorkerStepTimer,
    job_report,
)
from tfres.report.job import render_job_html, render_job_report
from tfres.watch.steps import read_steps_file

HERE = Path(__file__).parent


def _worker(
    n: int,
    *,
    step: float,
    wait: float = 0.0,
    started: str = "2025-01-01T10:00:00Z",
    job: str = "J",
    fp: dict | None = None,
    with_steps: bool = True,
    elapsed: float | None = None,
):
    r = syn.record(fp=fp or syn.fingerprint(), job=job, worker=n)
    r.started_at = started
    if with_steps:
        r.steps = syn.steps(20, duration=step, wait=wait)
    if elapsed is not None:
        r.elapsed_seconds = elapsed
    return r


def _text(report: JobReport, width: int = 100) -> str:
    console = Console(width=width, record=True, force_terminal=False)
    render_job_report(report, console)
    return console.export_text()


def test_straggler_by_steps_names_the_slow_worker_and_its_input_wait():
    records = [
        _worker(0, step=0.020, wait=0.001),
        _worker(1, step=0.080, wait=0.061),
        _worker(2, step=0.021, wait=0.001),
    ]
    report = job_report(records)
    assert report.job == "J"
    assert [w.worker for w in report.workers] == [0, 1, 2]
    assert report.straggler is not None
    assert report.straggler.worker == 1
    assert report.straggler.metric == "median step"
    assert report.straggler.ratio == pytest.approx(0.080 / 0.0205, rel=1e-3)
    assert report.straggler.compared_with == 0
    assert any("waits for input" in r for r in report.straggler.reasons)
    assert "worker 1 is the straggler" in report.verdict
    # merged timeline: all steps of all workers, tagged, in time order
    assert len(report.steps) == 60
    assert {s["worker"] for s in report.steps} == {0, 1, 2}
    times = [s["t_seconds"] for s in report.steps]
    assert times == sorted(times)


def test_timeline_aligned_by_start_time():
    records = [
        _worker(0, step=0.02, started="2025-01-01T10:00:00Z"),
        _worker(1, step=0.02, started="2025-01-01T10:00:02.500Z"),
    ]
    report = job_report(records)
    assert report.worker(0).offset_seconds == 0.0
    assert report.worker(1).offset_seconds == pytest.approx(2.5)
    first_of_1 = min(s["t_seconds"] for s in report.steps if s["worker"] == 1)
    assert first_of_1 == pytest.approx(2.5 + records[1].steps[0]["t_seconds"])
    samples_of_1 = [s for s in report.samples if s["worker"] == 1]
    assert samples_of_1[0]["t_seconds"] == pytest.approx(2.5)


def test_no_straggler_when_workers_keep_pace():
    ratio_below = STRAGGLER_RATIO - 0.05
    report = job_report([_worker(0, step=0.050), _worker(1, step=0.050 * ratio_below)])
    assert report.straggler is None
    assert "no straggler" in report.verdict


def test_without_steps_the_longest_run_is_the_straggler():
    records = [
        _worker(0, step=0, with_steps=False, elapsed=10.0),
        _worker(1, step=0, with_steps=False, elapsed=16.0),
    ]
    report = job_report(records)
    assert report.straggler is not None
    assert report.straggler.worker == 1
    assert report.straggler.metric == "elapsed"


def test_environment_difference_is_a_reason():
    slow_fp = syn.fingerprint(env={"OMP_NUM_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1"})
    records = [
        _worker(0, step=0.020),
        _worker(1, step=0.060, fp=slow_fp),
    ]
    report = job_report(records)
    assert report.straggler is not None and report.straggler.worker == 1
    text = " ".join(report.straggler.reasons)
    assert "own compute" in text
    assert "TF_NUM_INTRAOP_THREADS" in text or "OMP_NUM_THREADS" in text


def test_bad_inputs_are_one_line_errors():
    with pytest.raises(ValueError, match="no records"):
        job_report([])
    with pytest.raises(ValueError, match="different jobs"):
        job_report([_worker(0, step=0.02, job="a"), _worker(1, step=0.02, job="b")])


def test_one_worker_and_duplicates():
    report = job_report([_worker(0, step=0.02)])
    assert report.straggler is None and "one worker" in report.verdict
    old = _worker(1, step=0.5)
    old.created_at = "2025-01-01T09:00:00Z"
    new = _worker(1, step=0.02)
    new.created_at = "2025-01-01T11:00:00Z"
    report = job_report([_worker(0, step=0.02), old, new])
    assert report.worker(1).record_id == new.id
    assert any("several records" in n for n in report.notes)


def test_round_trip_and_rendering_escapes_record_strings():
    records = [
        _worker(0, step=0.02, job="<b>[red]x"),
        _worker(1, step=0.2, wait=0.18, job="<b>[red]x"),
    ]
    report = job_report(records)
    again = JobReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again.straggler == report.straggler
    assert again.workers == report.workers
    text = _text(report)
    assert "<b>[red]x" in text  # shown as text, not as markup
    assert "1 slow" in text
    assert max(len(line) for line in text.splitlines()) <= 100
    html = render_job_html(report)
    assert "<b>[red]x" not in html and "&lt;b&gt;[red]x" in html
    assert "<svg" in html


def test_worker_step_timer_splits_input_compute_and_sync(tmp_path):
    now = [100.0]
    path = tmp_path / "steps.jsonl"
    timer = WorkerStepTimer(steps_file=path, clock=lambda: now[0])
    for _ in range(2):
        with timer.step(epoch=3) as s:
            now[0] += 0.010
            s.input_done()
            now[0] += 0.030
            s.compute_done()
            now[0] += 0.200  # waiting for the other workers
    timer.close()
    first = timer.steps[0]
    assert first["input_wait_seconds"] == pytest.approx(0.010)
    assert first["duration_seconds"] == pytest.approx(0.040)
    assert first["sync_seconds"] == pytest.approx(0.200)
    assert timer.steps[1]["t_seconds"] == pytest.approx(0.240)
    read = read_steps_file(path)
    assert [r["duration_seconds"] for r in read] == pytest.approx([0.040, 0.040])
    assert [r["epoch"] for r in read] == [3, 3]


def _free_ports(n: int) -> list[int]:
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


@pytest.mark.slow
def test_two_worker_job_names_the_slowed_worker(tmp_path, store_path, capsys):
    """Two real MultiWorkerMirroredStrategy workers on 127.0.0.1, each under ``tfres run``;
    worker 1 sleeps in its input pipeline, so it holds the job back."""
    cluster = {"worker": [f"127.0.0.1:{p}" for p in _free_ports(2)]}
    tfres = [sys.executable, "-m", "tfres"]
    procs = []
    for index in (0, 1):
        env = dict(os.environ)
        env["TF_CONFIG"] = json.dumps(
            {"cluster": cluster, "task": {"type": "worker", "index": index}}
        )
        env["STEPS"] = "12"
        env["SLOW_INPUT_SECONDS"] = "0.06" if index == 1 else "0"
        env.pop("TFRES_STEPS_FILE", None)
        cmd = [
            *tfres,
            "run",
            "--job",
            "mwms",
            "--worker",
            str(index),
            "--",
            sys.executable,
            str(HERE / "jobs_worker.py"),
        ]
        procs.append(
            subprocess.Popen(
                cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        )
    deadline = time.monotonic() + 120
    outputs = []
    for p in procs:
        out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        outputs.append((p.returncode, out, err))
    for code, out, err in outputs:
        assert code == 0, err[-2000:]
        assert json.loads(out.strip().splitlines()[-1])["kind"] == "multi_worker_mirrored"

    from tfres.store import Store

    with Store(store_path) as store:
        records = store.records(job="mwms")
    assert sorted(r.worker for r in records) == [0, 1]
    assert all(len(r.steps) == 12 for r in records)
    report = job_report(records)
    assert report.straggler is not None, report.verdict
    assert report.straggler.worker == 1
    assert any("waits for input" in r for r in report.straggler.reasons)
    assert report.worker(1).input_wait_median_seconds == pytest.approx(0.06, abs=0.02)
    assert "worker 1 is the straggler" in _text(report)
    # and through the command line (tfres report --job, contract 9)
    from tfres.cli import main

    assert main(["report", "--job", "mwms"]) == 0
    assert "worker 1 is the straggler" in capsys.readouterr().out
