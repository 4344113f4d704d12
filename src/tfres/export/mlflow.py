"""Records in MLflow after the fact: ``tfres push``, ``mlflow:RUN_ID`` and jobs across machines.

    result = push_record(record, "http://127.0.0.1:5000", html=page_bytes)   # tfres push
    record = load_record("mlflow:3f2a...", uri)       # what tfres compare/report read
    records = job_records("resnet", uri)              # every worker of a job, any machine

A record pushed (or streamed by ``tfres run --mlflow``) lives in its run as the artifact
``tfres/record.json``, with the tags ``tfres.job``/``tfres.worker``; workers that ran on
different machines, each with its own local store, meet again through those tags.
"""

from __future__ import annotations

import calendar
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from tfres.errors import RecordError
from tfres.record import Record, load
from tfres.watch.mlflow import (
    RECORD_ARTIFACT,
    MlflowError,
    MlflowResult,
    check_server,
    client,
    experiment_id,
    log_points,
    log_record,
    terminate,
    with_deadline,
)
from tfres.watch.mlflow_metrics import DEFAULT_MAX_POINTS, record_points

__all__ = ["MLFLOW_PREFIX", "push_record", "load_record", "job_records", "is_mlflow_ref"]

log = logging.getLogger("tfres")

#: a record reference naming an MLflow run: ``mlflow:RUN_ID``
MLFLOW_PREFIX = "mlflow:"


def is_mlflow_ref(ref: str) -> bool:
    return ref.startswith(MLFLOW_PREFIX)


def _start_wall(record: Record) -> float:
    """``started_at`` as Unix seconds (the record's clock starts there); 0 when missing."""
    text = (record.started_at or record.created_at or "").strip().rstrip("Z")
    whole, _, fraction = text.partition(".")
    try:
        seconds = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return 0.0
    return seconds + (float("0." + fraction) if fraction.isdigit() else 0.0)


def push_record(
    record: Record,
    uri: str,
    *,
    run_id: str | None = None,
    experiment: str | None = None,
    html: bytes | None = None,
    timeout_seconds: float = 60.0,
    max_points: int = DEFAULT_MAX_POINTS,
) -> MlflowResult:
    """Send a saved record to MLflow: samples as system metrics, tags, params, artifacts.

    ``run_id`` adds it to that run; else a new run is made in ``experiment`` (default:
    ``$MLFLOW_EXPERIMENT_NAME``, else MLflow's default) named after the record's label.
    Raises :class:`MlflowError` in one line when the server cannot be used.
    """
    check_server(uri, timeout_seconds=min(10.0, timeout_seconds))
    c = client(uri)
    result = MlflowResult(uri, run_id=run_id, joined=run_id is not None)

    def send() -> None:
        if result.run_id is None:
            exp = experiment_id(c, experiment)
            run = c.create_run(exp, run_name=record.label, tags={"tfres.record_id": record.id})
            result.run_id, result.experiment_id = run.info.run_id, exp
        else:
            result.experiment_id = _get_run(c, result.run_id).info.experiment_id
        points = record_points(record.samples, _start_wall(record), max_points=max_points)
        log_points(c, result.run_id, points)
        log_record(c, result.run_id, record, html=html)
        if not result.joined:
            terminate(c, result.run_id, _status(record.status))

    with_deadline(send, timeout_seconds, "sending the record")
    return result


def _status(status: str) -> str:
    return {"ok": "FINISHED", "failed": "FAILED", "partial": "KILLED"}.get(status, "FINISHED")


def _get_run(c: Any, run_id: str) -> Any:
    from mlflow.exceptions import MlflowException

    try:
        return c.get_run(run_id)
    except MlflowException as err:
        raise MlflowError(
            f"no MLflow run {run_id!r} on {c.tracking_uri} ({_first_line(err)}); "
            "check the id in the MLflow UI"
        ) from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:200] if text else type(err).__name__


def load_record(ref: str, uri: str, *, timeout_seconds: float = 60.0) -> Record:
    """The tfres record of MLflow run ``ref`` (``mlflow:RUN_ID`` or the bare id).

    Raises :class:`MlflowError` for an unreachable server or an unknown run, and
    :class:`~tfres.errors.RecordError` for a run that holds no tfres record.
    """
    run_id = ref[len(MLFLOW_PREFIX) :] if is_mlflow_ref(ref) else ref
    if not run_id.strip():
        raise ValueError(f"{ref!r} names no run; write mlflow:RUN_ID (the id the MLflow UI shows)")
    check_server(uri, timeout_seconds=min(10.0, timeout_seconds))
    c = client(uri)
    return with_deadline(lambda: _download(c, run_id), timeout_seconds, f"reading run {run_id}")


def _download(c: Any, run_id: str) -> Record:
    from mlflow.exceptions import MlflowException

    _get_run(c, run_id)
    with tempfile.TemporaryDirectory(prefix="tfres-mlflow-") as tmp:
        try:
            path = c.download_artifacts(run_id, RECORD_ARTIFACT, tmp)
        except (MlflowException, OSError) as err:
            raise RecordError(
                f"MLflow run {run_id} has no tfres record ({RECORD_ARTIFACT}: "
                f"{_first_line(err)}); send one with tfres push RUN --mlflow URI --run-id {run_id}"
            ) from None
        return load(Path(path))


def job_records(job: str, uri: str, *, timeout_seconds: float = 120.0) -> list[Record]:
    """The records of every run tagged ``tfres.job = job`` on the server, oldest first.

    Runs of the job without a record artifact are skipped with a warning. Raises
    :class:`MlflowError` when the server cannot be used; [] when no run has the tag.
    """
    check_server(uri, timeout_seconds=min(10.0, timeout_seconds))
    c = client(uri)

    def fetch() -> list[Record]:
        ids = [e.experiment_id for e in c.search_experiments(max_results=1000)]
        escaped = job.replace("'", "\\'")
        runs: list[Any] = []
        for i in range(0, len(ids), 100):
            runs += c.search_runs(
                ids[i : i + 100],
                filter_string=f"tags.`tfres.job` = '{escaped}'",
                max_results=1000,
                order_by=["attributes.start_time ASC"],
            )
        records = []
        for run in runs:
            try:
                records.append(_download(c, run.info.run_id))
            except RecordError as err:
                log.warning("tfres: %s", err)
        return records

    return with_deadline(fetch, timeout_seconds, f"reading the runs of job {job}")
