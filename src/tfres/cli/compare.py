"""``tfres compare A B``: explain why two runs or two machines differ."""

from __future__ import annotations

import argparse
from pathlib import Path

from tfres.cli._common import (
    add_json_option,
    add_store_option,
    check_output_file,
    console,
    output_file_arg,
    print_json,
    resolve_ref,
)
from tfres.cli.push import add_mlflow_option
from tfres.comparison.compare import compare

EPILOG = """\
examples:
  tfres compare 3 7                        two runs from the store, by number
  tfres compare desktop.json laptop.json   two record files (e.g. tfres bench on each machine)
  tfres compare 3 7 --html compare.html    also write a self-contained HTML page
  tfres compare 3 7 --json                 the comparison as JSON
  tfres compare 3 mlflow:3f2a...           a local run against one sent to MLflow

Ratios are B over A: 2.00x means B took twice as long. A difference above 1.25x is
explained from the environment differences that account for it (thread pools, usable
cores, background load, CPU, GPU, versions), with the evidence from both records.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="explain why two runs or two machines differ",
        description=(
            "Compare two records (tfres bench or tfres run, from this machine or another): "
            "the environment diff ordered by likely impact, per-workload ratios and resource "
            "patterns, and a written explanation of each large difference."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "a", metavar="A", help="the first record: a store number, an id (or prefix), or a file"
    )
    p.add_argument("b", metavar="B", help="the second record, the same way")
    p.add_argument(
        "--html",
        metavar="FILE",
        type=output_file_arg,
        default=None,
        help="also write the comparison as an HTML page",
    )
    p.add_argument("--all", action="store_true", help="list the unchanged environment items too")
    add_store_option(p)
    add_mlflow_option(p, "read mlflow:RUN_ID records from this MLflow server")
    add_json_option(p)
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:

    check_output_file(args.html, "--html")  # before the work: a bad path wastes none of it
    a = resolve_ref(args.a, store=args.store, mlflow=args.mlflow)
    b = resolve_ref(args.b, store=args.store, mlflow=args.mlflow)
    comparison = compare(a, b)
    if args.html:
        from tfres.record import atomic_write_bytes
        from tfres.report.compare_html import render_compare_html

        target = Path(args.html)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, render_compare_html(comparison, a, b).encode("utf-8"))
    if args.json:
        print_json(comparison.to_dict())
    else:
        from tfres.report.compare_terminal import render_comparison

        out = console()
        render_comparison(comparison, out, show_unchanged=args.all)
        if args.html:
            from rich.markup import escape

            out.print(f"HTML written to {escape(str(target))}", soft_wrap=True)
    return 0
