"""``tfres report``: render a saved record (from bench or run) in the terminal and as HTML."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.text import Text

from tfres.cli._common import (
    add_store_option,
    check_output_file,
    console,
    output_file_arg,
    resolve_ref,
)
from tfres.cli.push import add_mlflow_option, mlflow_uri
from tfres.errors import StoreError
from tfres.jobs.merge import job_report
from tfres.report.job import render_job_html, render_job_report
from tfres.report.terminal import render_record
from tfres.store import Store

EPILOG = """\
examples:
  tfres report 3                       the summary of run 3 of the store
  tfres report 3 --html run3.html      ... and a self-contained HTML page (works offline)
  tfres report runs/a.json --html a.html
  tfres report --job resnet            the workers of a multi-worker job, side by side
  tfres report --job resnet --mlflow http://mlflow:5000   ... workers of several machines
  tfres report mlflow:3f2a...          a run sent to MLflow ($MLFLOW_TRACKING_URI)

RUN is a store number (see `tfres runs`), an id or its prefix, a record file, or
mlflow:RUN_ID (read from --mlflow URI, else $MLFLOW_TRACKING_URI).
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="show a saved run; write its HTML report",
        description="Render any saved record, from `tfres bench` or `tfres run`: a summary in\n"
        "the terminal (at most 100 columns) and, with --html, a self-contained HTML page\n"
        "(works offline) with the machine, the findings, the workloads and the CPU, memory\n"
        "and GPU timelines with phases and marks shaded.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run", metavar="RUN", nargs="?", default=None, help="store number, id or file")
    p.add_argument(
        "--html",
        metavar="FILE",
        type=output_file_arg,
        default=None,
        help="also write the HTML report here",
    )
    p.add_argument(
        "--job",
        metavar="NAME",
        default=None,
        help="report every worker of this multi-worker job instead of one run",
    )
    add_store_option(p)
    add_mlflow_option(p, "read mlflow:RUN_ID and --job runs from this MLflow server")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    check_output_file(args.html, "--html")  # before the work: a bad path wastes none of it
    if args.job is not None:
        return _job_report(args)
    if args.run is None:
        raise ValueError("tfres report needs a RUN (a number from `tfres runs`) or --job NAME")

    record = resolve_ref(args.run, store=args.store, mlflow=args.mlflow)
    out = console()
    render_record(record, out)
    if args.html:
        from tfres.report.html import write_html

        path = write_html(record, Path(args.html)).resolve()
        out.print(Text(f"HTML report: {path}"))
    return 0


def _job_report(args: argparse.Namespace) -> int:

    if args.run is not None:
        raise ValueError(
            f"give either RUN or --job, not both (got {args.run!r} and --job {args.job!r})"
        )
    uri = mlflow_uri(args)
    if uri is not None:
        from tfres.export.mlflow import job_records

        records = job_records(args.job, uri)
        if not records:
            raise StoreError(
                f"no MLflow runs tagged tfres.job={args.job!r} on {uri}; record them with "
                f"`tfres run --mlflow {uri} --job {args.job} --worker N -- CMD`"
            )
    else:
        with Store(args.store, readonly=True) as store:
            records = store.records(job=args.job)
            path = store.path
    if not records:
        raise StoreError(
            f"no runs of job {args.job!r} in store {path}; record them with "
            f"`tfres run --job {args.job} --worker N -- CMD`"
        )

    report = job_report(records)
    out = console()
    render_job_report(report, out)
    if args.html:
        from tfres.record import atomic_write_bytes
        from tfres.report.html import html_page

        page = html_page(
            f"tfres job: {args.job}", render_job_html(report), source=f"job {args.job}"
        )
        target = Path(args.html)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, page.encode("utf-8"))
        out.print(Text(f"HTML report: {target.resolve()}"))
    return 0
