"""A real ``mlflow server`` (SQLite backend, served artifacts) fed by real ``tfres run``s."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import free_port
from tfres.cli import main

WORKER = """
import time, tfres
for _ in tfres.steps.timed(range({steps})):
    time.sleep({step_seconds})
"""

SCRIPT_WITH_MLFLOW = """
import time, mlflow
mlflow.set_experiment("users-own")
with mlflow.start_run() as run:
    mlflow.log_metric("loss", 0.25)
    time.sleep(0.5)
print("script run", run.info.run_id)
"""


def tfres(*argv: str, store, cwd, **kw) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["TFRES_STORE"] = str(store)
    return subprocess.Popen(
        [sys.executable, "-m", "tfres", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
        **kw,
    )


def client(uri):
    from mlflow import MlflowClient

    return MlflowClient(uri)


def runs_tagged(uri, key, value):
    c = client(uri)
    ids = [e.experiment_id for e in c.search_experiments()]
    return c.search_runs(ids, filter_string=f"tags.`{key}` = '{value}'")


def test_two_workers_two_stores_one_job_through_mlflow(mlflow_server, tmp_path, capsys):
    """The issue's check: a 3 s run leaves >= 20 system/ CPU points and the record artifact;
    workers with two different local stores are reported as one job through MLflow."""
    procs = []
    for n, step_seconds in enumerate((0.03, 0.09)):
        code = WORKER.format(steps=int(3 / step_seconds), step_seconds=step_seconds)
        argv = ["run", "--mlflow", mlflow_server, "--job", "jobM", "--worker", str(n)]
        argv += ["--label", f"w{n}", "--", sys.executable, "-c", code]
        procs.append(tfres(*argv, store=tmp_path / f"store{n}.sqlite", cwd=tmp_path))
    outs = [p.communicate(timeout=90) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    for out, err in outs:
        assert "tfres: MLflow run " in err and "Traceback" not in err
        assert out == ""  # MLflow's "View run" lines go to stderr: stdout is the command's

    (run0,) = runs_tagged(mlflow_server, "tfres.worker", "0")
    cpu = client(mlflow_server).get_metric_history(
        run0.info.run_id, "system/cpu_utilization_percentage"
    )
    assert len(cpu) >= 20
    steps = [m.step for m in cpu]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)
    artifacts = {a.path for a in client(mlflow_server).list_artifacts(run0.info.run_id, "tfres")}
    assert artifacts == {"tfres/record.json", "tfres/report.html"}
    assert run0.data.params["tfres.tensorflow"]
    assert run0.info.status == "FINISHED"

    empty = tmp_path / "empty.sqlite"  # a third machine: neither worker's store
    status = main(["report", "--job", "jobM", "--mlflow", mlflow_server, "--store", str(empty)])
    out = capsys.readouterr().out
    assert status == 0
    assert "worker 1 is the straggler" in " ".join(out.split())

    status = main(["report", f"mlflow:{run0.info.run_id}", "--mlflow", mlflow_server])
    assert status == 0 and "w0" in capsys.readouterr().out


def test_the_scripts_own_mlflow_run_is_joined(mlflow_server, tmp_path):
    proc = tfres(
        "run", "--mlflow", mlflow_server, "--", sys.executable, "-c", SCRIPT_WITH_MLFLOW,
        store=tmp_path / "s.sqlite", cwd=tmp_path,
    )  # fmt: skip
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 0, err
    script_run = out.split("script run ")[1].strip()
    assert f"tfres: MLflow run {script_run} (the script's own run)" in err
    run = client(mlflow_server).get_run(script_run)
    assert "loss" in run.data.metrics and "system/cpu_utilization_percentage" in run.data.metrics
    assert run.data.tags["tfres.kind"] == "run"
    # tfres's own run, made before the script's existed, is gone: one run holds both
    record_id = run.data.tags["tfres.record_id"]
    live = [r for r in runs_tagged(mlflow_server, "tfres.record_id", record_id)]
    assert [r.info.run_id for r in live] == [script_run]
    assert out.count("View run") == 1  # the script's own line: tfres adds none to its stdout


def test_unreachable_server_keeps_the_record_and_push_sends_it(mlflow_server, tmp_path, capsys):
    dead = f"http://127.0.0.1:{free_port()}"
    store = tmp_path / "s.sqlite"
    proc = tfres(
        "run", "--mlflow", dead, "--", sys.executable, "-c", "import time; time.sleep(0.5)",
        store=store, cwd=tmp_path,
    )  # fmt: skip
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0  # the command's status: MLflow never stops the work
    lines = [line for line in err.splitlines() if "MLflow" in line]
    assert len(lines) == 1 and "cannot be reached" in lines[0] and "tfres push 1" in lines[0]
    assert main(["push", "1", "--mlflow", mlflow_server, "--store", str(store)]) == 0
    run_id = capsys.readouterr().out.split("MLflow run ")[1].split()[0]
    record = client(mlflow_server).get_run(run_id)
    assert record.data.tags["tfres.status"] == "ok"
    from tfres.store import Store

    with Store(store) as s:  # the stored run now says where it went
        assert s.get(1).extra["mlflow"]["run_id"] == run_id
    assert main(["compare", "1", f"mlflow:{run_id}", "--store", str(store), "--mlflow",
                 mlflow_server, "--json"]) == 0  # fmt: skip


@pytest.mark.parametrize(
    "ref, message",
    [("mlflow:0123456789abcdef0123456789abcdef", "no MLflow run"), ("mlflow:", "names no run")],
)
def test_unknown_runs_are_one_line(mlflow_server, ref, message, capsys):
    assert main(["report", ref, "--mlflow", mlflow_server]) in (1, 2)
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_run_without_a_record_is_one_line(mlflow_server, capsys):
    run = client(mlflow_server).create_run("0")
    assert main(["report", f"mlflow:{run.info.run_id}", "--mlflow", mlflow_server]) == 1
    err = capsys.readouterr().err
    assert "has no tfres record" in err and err.count("\n") == 1


def test_a_wrong_uri_is_one_line(mlflow_server, capsys):
    assert main(["report", "mlflow:abc", "--mlflow", mlflow_server + "/not-mlflow"]) == 1
    err = capsys.readouterr().err
    assert "is not an MLflow tracking server" in err and err.count("\n") == 1


def test_monitor_joins_the_active_run_and_one_it_starts(mlflow_server, monkeypatch):
    import time

    import mlflow

    import tfres

    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server)
    mlflow.set_tracking_uri(mlflow_server)
    with mlflow.start_run() as outer:
        with tfres.monitor(store=False, mlflow=True, interval=0.05) as m:
            time.sleep(1.2)
    assert m.mlflow.run_id == outer.info.run_id and m.mlflow.error is None
    with tfres.monitor(store=False, mlflow=mlflow_server, interval=0.05) as m2:
        with mlflow.start_run() as inner:  # made inside the block: tagged, then joined
            time.sleep(2.5)
    assert m2.mlflow.run_id == inner.info.run_id and m2.mlflow.joined
    c = client(mlflow_server)
    for run_id in (outer.info.run_id, inner.info.run_id):
        points = c.get_metric_history(run_id, "system/process_memory_rss_megabytes")
        assert len(points) >= 10
        assert c.get_run(run_id).data.tags["tfres.kind"] == "monitor"
    assert m2.record.extra["mlflow"]["run_id"] == inner.info.run_id
    # tfres.monitor sends the HTML report too, as tfres run --mlflow does
    artifacts = {a.path for a in c.list_artifacts(outer.info.run_id, "tfres")}
    assert artifacts == {"tfres/record.json", "tfres/report.html"}
