"""Runs sent to an MLflow tracking server: ``tfres run --mlflow``, ``monitor(mlflow=...)``.

    sink = MlflowSink("http://127.0.0.1:5000")      # from tfres.watch.mlflow_sink
    sink.start(record)                 # probe the server, make (or join) the run; never raises
    sampler.add_listener(sink.on_sample)
    ...
    result = sink.finish(record)       # the rest: tags, params, the record as an artifact

Samples go to the run as system metrics (:mod:`tfres.watch.mlflow_metrics`) from a thread
of the sink's own, in batches of up to 1000 (``MlflowClient.log_batch``) every
``flush_seconds``. When the watched script makes an MLflow run itself (``mlflow.start_run()``
or autolog), MLflow tags it ``tfres.session`` (:mod:`tfres.watch.mlflow_context`) and the sink
moves to that run: the points sent so far are copied there and tfres's own run is deleted,
so one run holds both. A tracking server that cannot be reached or does not answer within
``timeout_seconds`` never stops or slows the work: one warning line, nothing more is sent,
and the record stays in the local store (``tfres push RUN --mlflow URI`` sends it later).
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tfres.errors import MissingDependencyError, TfresError
from tfres.record import Record, save
from tfres.watch.mlflow_metrics import MetricPoint

__all__ = [
    "MlflowError",
    "MlflowResult",
    "RECORD_ARTIFACT",
    "HTML_ARTIFACT",
    "tracking_uri",
    "check_server",
    "client",
    "log_record",
    "terminate",
]

log = logging.getLogger("tfres")

RECORD_ARTIFACT = "tfres/record.json"
HTML_ARTIFACT = "tfres/report.html"
_BATCH = 1000  # MLflow's limit of metrics per log_batch
_T = TypeVar("_T")


class MlflowError(TfresError):
    """The tracking server cannot be used: unreachable, not MLflow, an unknown run."""


def tracking_uri(value: str | bool | None) -> str:
    """``value``, or ``$MLFLOW_TRACKING_URI`` for True/None/""; ValueError when neither is set."""
    if isinstance(value, str) and value.strip():
        return value.strip().rstrip("/")
    env = os.environ.get("MLFLOW_TRACKING_URI", "").strip()
    if env:
        return env.rstrip("/")
    raise ValueError(
        "no MLflow tracking server given: write --mlflow http://HOST:PORT "
        "or set MLFLOW_TRACKING_URI"
    )


def check_server(uri: str, *, timeout_seconds: float = 5.0) -> None:
    """Raise :class:`MlflowError` in one line unless ``uri`` answers as an MLflow server.

    Only ``http(s)://`` URIs are probed (one GET of the experiments API); local ones
    (``file:``, ``sqlite:``) and hosted ones (``databricks``) are left to MLflow itself.
    """
    if not uri.startswith(("http://", "https://")):
        return
    url = f"{uri}/api/2.0/mlflow/experiments/search?max_results=1"
    try:
        with urllib.request.urlopen(url, timeout=timeout_seconds) as response:
            response.read(1)
    except urllib.error.HTTPError as err:
        if err.code == 404:
            raise MlflowError(
                f"{uri} is not an MLflow tracking server (HTTP 404 on its API); "
                "check the URI (e.g. http://HOST:5000)"
            ) from None
        if err.code in (401, 403):
            return  # it is a server; MLflow's own credentials ($MLFLOW_TRACKING_TOKEN) apply
        raise MlflowError(f"MLflow server {uri} answered HTTP {err.code}; check the URI") from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        why = getattr(err, "reason", None) or err
        raise MlflowError(
            f"MLflow server {uri} cannot be reached ({why}); start it or check --mlflow"
        ) from None


def client(uri: str) -> Any:
    """An ``MlflowClient`` for ``uri``; :class:`MissingDependencyError` without MLflow."""
    try:
        from mlflow import MlflowClient
    except ImportError as err:
        raise MissingDependencyError("mlflow", "sending runs to MLflow", "mlflow") from err
    return MlflowClient(tracking_uri=uri)


def with_deadline(fn: Callable[[], _T], seconds: float, what: str) -> _T:
    """``fn()`` in a thread; :class:`MlflowError` when it has not returned after ``seconds``.

    A call still running is left behind (a daemon thread): MLflow's own retries can take
    minutes, and the work must not wait for them.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:
            box["error"] = err

    thread = threading.Thread(target=target, name="tfres-mlflow-call", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise MlflowError(f"the MLflow server did not answer within {seconds:g} s ({what})")
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def log_points(mlflow_client: Any, run_id: str, points: list[MetricPoint]) -> None:
    """Send metric points, at most 1000 a call."""
    from mlflow.entities import Metric

    for i in range(0, len(points), _BATCH):
        metrics = [Metric(k, v, ts, step) for k, v, ts, step in points[i : i + _BATCH]]
        mlflow_client.log_batch(run_id, metrics=metrics, synchronous=True)


def record_tags(record: Record) -> dict[str, str]:
    """The record in a few tags: id, kind, status, job, worker, host and the findings."""
    tags = {
        "tfres.record_id": record.id,
        "tfres.kind": record.kind,
        "tfres.status": record.status,
        "tfres.host": record.host or "",
        "tfres.label": record.label or "",
        "tfres.job": record.job or "",
        "tfres.worker": "" if record.worker is None else str(record.worker),
    }
    ids = []
    for finding in record.findings[:40]:
        rule = str(finding.get("id") or finding.get("rule") or "finding")
        ids.append(rule)
        tags[f"tfres.finding.{rule}"] = (
            f"{finding.get('severity', '')}: {finding.get('title', '')}"[:5000]
        )
    tags["tfres.findings"] = ", ".join(ids) if ids else "none"
    return {k: v for k, v in tags.items() if v != ""}


def fingerprint_params(record: Record) -> dict[str, str]:
    """A short fingerprint as params: CPU, GPU, TensorFlow, CUDA (None parts left out)."""
    fp = record.fingerprint or {}
    cpu = fp.get("cpu") or {}
    tf = fp.get("tensorflow") or {}
    gpus = fp.get("gpus") or []
    build = tf.get("build_info") or {}
    cuda = build.get("cuda_version") or next(
        (g.get("cuda_driver_version") for g in gpus if g.get("cuda_driver_version")), None
    )
    params = {
        "tfres.cpu": f"{cpu.get('model')} ({cpu.get('usable_cores')} usable cores)"
        if cpu.get("model")
        else None,
        "tfres.gpu": ", ".join(str(g.get("name")) for g in gpus) if gpus else "none",
        "tfres.tensorflow": tf.get("version") if tf.get("installed") else "not installed",
        "tfres.cuda": cuda,
        "tfres.host": (fp.get("host") or {}).get("hostname"),
    }
    return {k: str(v)[:500] for k, v in params.items() if v is not None}


def log_record(
    mlflow_client: Any, run_id: str, record: Record, *, html: bytes | None = None
) -> None:
    """Tags, params and artifacts of a finished record (not its samples)."""
    from mlflow.entities import Param, RunTag

    tags = [RunTag(k, v) for k, v in record_tags(record).items()]
    mlflow_client.log_batch(run_id, tags=tags[:100], synchronous=True)
    existing = mlflow_client.get_run(run_id).data.params
    params = [
        Param(k, v) for k, v in fingerprint_params(record).items() if existing.get(k) in (None, v)
    ]
    if params:
        mlflow_client.log_batch(run_id, params=params, synchronous=True)
    with tempfile.TemporaryDirectory(prefix="tfres-mlflow-") as tmp:
        folder = Path(tmp)
        save(record, folder / "record.json")
        if html is not None:
            (folder / "report.html").write_bytes(html)
        mlflow_client.log_artifacts(run_id, str(folder), artifact_path="tfres")


def terminate(mlflow_client: Any, run_id: str, status: str, *, to_stderr: bool = True) -> None:
    """End a run; MLflow's "View run at" lines go to stderr (a watched command owns stdout)."""
    if not to_stderr:
        mlflow_client.set_terminated(run_id, status)
        return
    import contextlib
    import sys

    with contextlib.redirect_stdout(sys.stderr):
        mlflow_client.set_terminated(run_id, status)


@dataclass
class MlflowResult:
    """Where a record went in MLflow; ``error`` is one line when it did not get there."""

    tracking_uri: str
    run_id: str | None = None
    experiment_id: str | None = None
    joined: bool = False
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tracking_uri": self.tracking_uri,
            "run_id": self.run_id,
            "experiment_id": self.experiment_id,
            "joined_script_run": self.joined,
        }


def experiment_id(mlflow_client: Any, name: str | None) -> str:
    """Experiment ``name`` (made when missing), else $MLFLOW_EXPERIMENT_ID/_NAME, else "0"."""
    if name is None and os.environ.get("MLFLOW_EXPERIMENT_ID"):
        return os.environ["MLFLOW_EXPERIMENT_ID"]
    name = name or os.environ.get("MLFLOW_EXPERIMENT_NAME") or None
    if name is None:
        return "0"
    found = mlflow_client.get_experiment_by_name(name)
    if found is not None:
        return str(found.experiment_id)
    return str(mlflow_client.create_experiment(name))
