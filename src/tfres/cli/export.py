"""``tfres export RUN``: a record's timeline as CSV, JSON lines or TensorBoard scalars."""

from __future__ import annotations

import argparse
import sys

from tfres.cli._common import (
    add_store_option,
    check_output_file,
    check_output_folder,
    output_file_arg,
)
from tfres.export import write_csv, write_jsonl, write_tensorboard
from tfres.store import resolve_record

DESCRIPTION = """\
Write the timeline of a run, one row per sample, with columns named with their units
(t_seconds, cpu_percent, cpu0_percent, process_rss_bytes, gpu0_util_percent, ...), or as
TensorBoard scalars next to your training curves. An empty cell is a value that could not be
read. On long runs the part before the last 10 minutes is stored as 10 s buckets: those rows
come first, with the bucket means and bucket_seconds set.
"""

EPILOG = """\
examples:
  tfres export 3 --format csv --out run3.csv
  tfres export 3 --format jsonl | head
  tfres export runs/a.json --tensorboard logs/fit      then: tensorboard --logdir logs
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="write a run's timeline as CSV, JSON lines or TensorBoard scalars",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "run", metavar="RUN", help="a store number, an id (or its prefix), or a record file"
    )
    p.add_argument(
        "--format",
        choices=("csv", "jsonl"),
        default=None,
        help="csv (default) or jsonl; written to --out or stdout",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        type=output_file_arg,
        default=None,
        help="write to FILE instead of stdout",
    )
    p.add_argument(
        "--tensorboard",
        metavar="LOGDIR",
        type=output_file_arg,
        default=None,
        help="write TensorBoard scalars (tags tfres/...) into LOGDIR",
    )
    add_store_option(p)
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:

    check_output_file(args.out, "--out")  # before the work: a bad path wastes none of it
    check_output_folder(args.tensorboard, "--tensorboard")
    if args.out is not None and args.format is None and args.tensorboard is None:
        args.format = "jsonl" if args.out.endswith((".jsonl", ".ndjson")) else "csv"
    record = resolve_record(args.run, store=args.store)
    fmt = args.format or (None if args.tensorboard else "csv")
    if fmt is not None:
        writer = write_csv if fmt == "csv" else write_jsonl
        target = args.out if args.out is not None else sys.stdout
        n = writer(record, target)
        if args.out is not None:
            print(f"tfres: wrote {n} rows to {args.out}", file=sys.stderr)
    if args.tensorboard is not None:
        path = write_tensorboard(record, args.tensorboard)
        print(f"tfres: wrote TensorBoard scalars to {path}", file=sys.stderr)
    return 0
