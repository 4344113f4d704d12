"""``tfres bench``: run the standard workloads, save the record, print and write the report."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tfres.benchmark import run_bench, select_workloads
from tfres.cli._common import add_json_option, add_store_option, console, interval_arg, print_json
from tfres.cli.push import add_mlflow_option, mlflow_uri, push_after
from tfres.report.terminal import render_bench_summary
from tfres.workloads import WORKLOADS

EPILOG = """\
examples:
  tfres bench --quick                         the whole suite, small sizes (under a minute)
  tfres bench                                 the full suite (a few minutes)
  tfres bench --only cpu_matmul tf_matmul     just these workloads
  tfres bench --device all --label lab-pc     every GPU TensorFlow sees, and the CPU
  tfres bench --quick --set cpu_matmul.sizes=500,1000 --html out/bench.html
  tfres bench --quick --json --no-store       results as JSON, nothing saved

workloads: {workloads}

Run it on two machines, then `tfres compare A B` explains the differences.
The record goes to the local store (`tfres runs` lists it, `tfres report N` shows it again)
and an HTML report (self-contained, works offline) is written to ./tfres-bench-<id>.html.
"""


def register(sub: argparse._SubParsersAction) -> None:

    names = ", ".join(WORKLOADS)
    p = sub.add_parser(
        "bench",
        help="run the standard workloads and write a report",
        description="Run standard NumPy, TensorFlow and training workloads under the sampler:\n"
        "time, throughput, CPU, GPU and memory of each, on each selected device. Warm-up\n"
        "is excluded; each figure is the median of several repeats, with the spread.",
        epilog=EPILOG.format(workloads=names),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--quick", action="store_true", help="small sizes and few repeats (< 1 min)")
    p.add_argument(
        "--only",
        nargs="+",
        action="extend",
        metavar="NAME",
        default=None,
        help=f"run only these workloads (space- or comma-separated): {names}",
    )
    p.add_argument(
        "--device",
        choices=("cpu", "gpu", "all"),
        default="cpu",
        help="where the TensorFlow workloads run: cpu (default), gpu (every GPU) or all",
    )
    p.add_argument("--label", default=None, help="a name for this run, e.g. the machine's")
    p.add_argument(
        "--html",
        metavar="FILE",
        default=None,
        help="where to write the HTML report (default: ./tfres-bench-<id>.html)",
    )
    p.add_argument("--no-html", action="store_true", help="do not write an HTML report")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="NAME.KEY=VALUE",
        help="override a workload parameter, e.g. --set cpu_matmul.sizes=500,1000 (repeatable)",
    )
    p.add_argument(
        "--interval",
        type=interval_arg,
        default=0.1,
        help="sampling interval (default: 0.1 s)",
    )
    p.add_argument("--no-store", action="store_true", help="do not save the record in the store")
    add_store_option(p)
    add_mlflow_option(p, "also send the record to MLflow (metrics, findings, report)")
    add_json_option(p)
    p.set_defaults(func=cmd_bench)


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    if "," in text:
        return [_parse_value(part.strip()) for part in text.split(",") if part.strip()]
    return text


def parse_overrides(items: list[str]) -> dict[str, dict[str, Any]]:
    """``["cpu_matmul.sizes=500,1000"]`` -> ``{"cpu_matmul": {"sizes": [500, 1000]}}``."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        name_key, sep, value = item.partition("=")
        name, dot, key = name_key.partition(".")
        if not sep or not dot or not name or not key:
            raise ValueError(
                f"--set takes NAME.KEY=VALUE, e.g. --set cpu_matmul.sizes=500,1000 (got {item!r})"
            )
        out.setdefault(name.strip(), {})[key.strip()] = _parse_value(value.strip())
    return out


def _progress_bars(workload_names: list[str]) -> tuple[Any, Any]:
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    progress = Progress(
        TextColumn("{task.description:<15}"),
        BarColumn(bar_width=24),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TextColumn("[dim]{task.fields[message]}", markup=True),
        console=console(stderr=True),
        transient=False,
    )
    tasks = {
        name: progress.add_task(name, total=1.0, message="waiting", start=False)
        for name in workload_names
    }
    started: set[str] = set()

    def update(name: str, fraction: float, message: str) -> None:
        from rich.markup import escape

        if name in tasks:
            if name not in started:  # the clock of a bar starts with its workload
                started.add(name)
                progress.start_task(tasks[name])
            progress.update(tasks[name], completed=fraction, message=escape(message))

    return progress, update


def cmd_bench(args: argparse.Namespace) -> int:

    only, workloads, overrides = _checked_before_work(args)
    store: bool | str = False if args.no_store else (args.store or True)
    uri = mlflow_uri(args)  # --mlflow without a URI or $MLFLOW_TRACKING_URI: before the work
    progress, update = _progress_bars([w.name for w in workloads])
    with progress:
        saved = run_bench(
            quick=args.quick,
            only=only,
            device=args.device,
            label=args.label,
            interval=args.interval,
            progress=update,
            params=overrides,
            store=store,
        )
    record, number, store_path = saved.record, saved.store_number, saved.store_path
    if saved.error:
        console(stderr=True).print(
            f"tfres: error: the record was not saved: {saved.error}", markup=False
        )
    if uri is not None:
        push_after(record, number, args, uri)
    html_path = None
    if not args.no_html:
        from tfres.report.html import write_html

        html_path = write_html(record, Path(args.html or f"tfres-bench-{record.id}.html")).resolve()
    if args.json:
        print_json(_json_summary(record, number, html_path))
        return 0 if record.status == "ok" and not saved.error else 1
    render_bench_summary(
        record,
        console(),
        store_number=number,
        store_path=store_path if number is not None else None,
        html_path=html_path,
    )
    return 0 if record.status == "ok" and not saved.error else 1


def _checked_before_work(
    args: argparse.Namespace,
) -> tuple[list[str] | None, list[Any], dict[str, dict[str, Any]]]:
    """``(only, workloads, overrides)``; a bad workload name, ``--set``, device or ``--html``
    path fails here, before any progress bar shows."""

    only = None
    if args.only:
        only = [n.strip() for item in args.only for n in item.split(",") if n.strip()]
    workloads = select_workloads(only)
    overrides = parse_overrides(args.overrides)
    if args.device != "cpu":  # no GPU: say why
        from tfres.benchmark import resolve_devices
        from tfres.machine.fingerprint import fingerprint

        resolve_devices(args.device, fingerprint=fingerprint(processes=False).to_dict())
    if not args.no_html and args.html is not None:
        from tfres.session import check_output_path

        check_output_path(args.html, what="--html")
    return only, workloads, overrides


def _json_summary(record: Any, number: int | None, html_path: Path | None) -> dict[str, Any]:
    return {
        "id": record.id,
        "store_number": number,
        "html": str(html_path) if html_path else None,
        "status": record.status,
        "elapsed_seconds": record.elapsed_seconds,
        "workloads": record.workloads,
        "findings": record.findings,
        "notes": record.notes,
    }
