"""``tfres push RUN --mlflow URI``: send saved records to MLflow; the --mlflow of run and bench."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tfres.cli._common import add_store_option, resolve_ref
from tfres.export.mlflow import push_record
from tfres.record import save
from tfres.report.monitoring import html_bytes
from tfres.store import Store
from tfres.watch.mlflow import MlflowResult, tracking_uri
from tfres.watch.mlflow_sink import MlflowSink

EPILOG = """\
examples:
  tfres push 3 --mlflow http://127.0.0.1:5000      run 3 of the store, as a new MLflow run
  tfres push 3 4 5                                 to $MLFLOW_TRACKING_URI
  tfres push runs/a.json --mlflow URI --run-id 3f2a...   into that existing run

Each record becomes (or joins) one MLflow run: its samples as system metrics (the system/
names of MLflow's own charts), its findings as tags, a short fingerprint as params, and the
record (tfres/record.json) and its HTML report (tfres/report.html) as artifacts. Read it
back anywhere with tfres report mlflow:RUN_ID or tfres compare mlflow:ID1 mlflow:ID2.
"""


def add_mlflow_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--mlflow [URI]``; without URI, ``$MLFLOW_TRACKING_URI``."""
    parser.add_argument(
        "--mlflow",
        nargs="?",
        const="",
        default=None,
        metavar="URI",
        help=f"{what} (default URI: $MLFLOW_TRACKING_URI)",
    )


def mlflow_uri(args: argparse.Namespace) -> str | None:
    """The tracking URI asked for (None without ``--mlflow``); ValueError when none is set."""
    if getattr(args, "mlflow", None) is None:
        return None

    return tracking_uri(args.mlflow)


def make_sink(args: argparse.Namespace) -> Any:
    """The live MLflow sink of ``tfres run --mlflow`` (None without the option).

    It starts as a watcher, once the command runs (``on_start``).
    """
    uri = mlflow_uri(args)
    if uri is None:
        return None

    return MlflowSink(uri, run_name=args.label, html=html_bytes, warn=False)  # after_mlflow says


def after_mlflow(result: Any, record: Any, number: int | None, args: argparse.Namespace) -> None:
    """Say where the record went in MLflow (one line on stderr) and keep that in the record.

    The local copies (store, ``--out``) are saved again with ``extra["mlflow"]``; when the
    server failed, the line says how to send the record later.
    """
    record.extra["mlflow"] = result.to_dict()
    if number is not None:
        _save_again(record, args)
    ref = str(number) if number is not None else (getattr(args, "out", None) or "RUN")
    if result.error:
        print(
            f"tfres: MLflow: not sent ({result.error}); the record is kept locally; "
            f"send it later: tfres push {ref} --mlflow {result.tracking_uri}",
            file=sys.stderr,
        )
    else:
        joined = " (the script's own run)" if result.joined else ""
        print(
            f"tfres: MLflow run {result.run_id}{joined} at {result.tracking_uri}",
            file=sys.stderr,
        )


def _save_again(record: Any, args: argparse.Namespace) -> None:

    try:
        with Store(getattr(args, "store", None)) as store:
            store.save(record)
        if getattr(args, "out", None):
            save(record, Path(args.out))
    except Exception as err:  # the record is saved already; this only adds the MLflow run id
        print(f"tfres: warning: the MLflow run id was not added locally: {err}", file=sys.stderr)


def push_after(record: Any, number: int | None, args: argparse.Namespace, uri: str) -> None:
    """``tfres bench --mlflow``: send the finished record; a failure is one line, not an error."""

    try:
        result = push_record(record, uri, html=html_bytes(record), timeout_seconds=30.0)
    except Exception as err:
        result = MlflowResult(uri, error=str(err).splitlines()[0] if str(err) else repr(err))
    after_mlflow(result, record, number, args)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "push",
        help="send saved runs to an MLflow tracking server",
        description="Send saved records to MLflow: samples as system metrics, findings as "
        "tags, the fingerprint as params, the record and its HTML report as artifacts.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("runs", metavar="RUN", nargs="+", help="store number, id or record file")
    add_mlflow_option(p, "the MLflow tracking server")
    p.add_argument("--run-id", default=None, metavar="ID", help="add to this MLflow run")
    p.add_argument("--experiment", default=None, metavar="NAME", help="MLflow experiment")
    add_store_option(p)
    p.set_defaults(func=cmd_push, mlflow="")


def cmd_push(args: argparse.Namespace) -> int:

    uri = mlflow_uri(args)
    assert uri is not None
    if args.run_id is not None and len(args.runs) > 1:
        raise ValueError(f"--run-id takes one RUN (got {len(args.runs)}: {' '.join(args.runs)})")
    records = [resolve_ref(ref, store=args.store) for ref in args.runs]  # all found, or none sent
    for ref, record in zip(args.runs, records, strict=True):
        result = push_record(
            record, uri, run_id=args.run_id, experiment=args.experiment, html=html_bytes(record)
        )
        print(f"{ref}: MLflow run {result.run_id} (experiment {result.experiment_id}) at {uri}")
        if _in_store(ref):  # the stored copy remembers where it went
            record.extra["mlflow"] = result.to_dict()
            _save_again(record, args)
    return 0


def _in_store(ref: str) -> bool:
    """Whether ``ref`` names a stored run (not a file, not ``mlflow:``), as resolve_record reads."""
    import os

    return not (ref.startswith("mlflow:") or ref.endswith((".json", ".gz")) or os.sep in ref)
