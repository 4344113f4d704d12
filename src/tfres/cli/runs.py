"""``tfres runs`` and ``tfres show``: list and print the records in the local store."""

from __future__ import annotations

import argparse

from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from tfres.cli._common import (
    add_json_option,
    add_store_option,
    bounded_int_arg,
    console,
    print_json,
)
from tfres.report.terminal import render_record
from tfres.store import NoStoreError, Store, StoredRun, default_store_path, resolve_record
from tfres.units import format_seconds

#: the most rows ``--limit`` asks for
MAX_LIMIT = 1_000_000_000


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "runs",
        help="list the runs in the local store",
        description="List the records in the local store, newest first.",
        epilog="example: tfres runs --limit 5",
    )
    p.add_argument(
        "--limit",
        type=bounded_int_arg(1, MAX_LIMIT),
        default=50,
        metavar="N",
        help="show at most this many (default: 50)",
    )
    p.add_argument("--job", default=None, help="only the workers of this multi-worker job")
    add_store_option(p)
    add_json_option(p)
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser(
        "show",
        help="print one record",
        description="Print one record: from the store by number or id, or from a file.",
        epilog="examples:\n  tfres show 3\n  tfres show runs/a.json --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "run",
        metavar="RUN",
        help="a store number, an id (or its prefix), or a record file (./3 for a file named 3)",
    )
    add_store_option(p)
    add_json_option(p)
    p.set_defaults(func=cmd_show)


def _stored_runs(args: argparse.Namespace) -> tuple[list[StoredRun], str] | None:
    """The runs asked for and the store's path; None when the default store is not made yet."""
    try:
        with Store(args.store, readonly=True) as store:
            return store.runs(limit=args.limit, job=args.job), str(store.path)
    except NoStoreError:
        if args.store is None:  # nothing recorded yet is no error; a mistyped --store is
            return None
        raise


def cmd_runs(args: argparse.Namespace) -> int:
    found = _stored_runs(args)
    runs, path = found if found is not None else ([], str(default_store_path()))
    if args.json:
        print_json([r.__dict__ for r in runs])
        return 0
    if not runs:
        message = _nothing_found(args, path, store_exists=found is not None)
        console().print(Text(message), soft_wrap=True)
        return 0
    table = Table(
        title=f"runs in {escape(path)}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=(0, 1),
    )
    rows = [
        (
            str(r.n),
            r.id,
            escape(r.label or ""),
            escape(r.host or ""),
            format_seconds(r.elapsed_seconds),
            r.status,
            escape(" ".join((r.what or "").split())),
        )
        for r in runs
    ]
    # the id starts with the UTC date and time, so no date column. Numbers, ids and states
    # stay whole; label (24) and host (12) are cut and
    # the command gets what is left of the line (`tfres show N` has them all whole)
    out = console()
    names = ("#", "id", "label", "host", "took", "status", "what ran")
    whole = [max([len(name), *(len(row[i]) for row in rows)]) for i, name in enumerate(names)]
    widths = dict(zip(names, whole, strict=True))
    widths["host"] = min(widths["host"], 12)
    # each column costs 2 of padding and 1 of separator; the outer edges drop 2 of that
    free = out.width - (3 * len(names) - 1)
    free -= sum(w for name, w in widths.items() if name not in ("label", "what ran"))
    widths["label"] = min(widths["label"], 24, max(5, free - 20))
    widths["what ran"] = max(12, free - widths["label"])
    for name in names:
        table.add_column(name, no_wrap=True, overflow="ellipsis", width=widths[name])
    for row in rows:
        table.add_row(*row)
    out.print(table)
    return 0


def _nothing_found(args: argparse.Namespace, path: str, *, store_exists: bool) -> str:
    if args.job is not None:
        return (
            f"no runs of job {args.job!r} in store {path}; record one with "
            f"`tfres run --job {args.job} --worker 0 -- CMD`, or list all runs with `tfres runs`"
        )
    where = f"in store {path}" if store_exists else f"yet (no store at {path})"
    return f"no runs {where}: try `tfres bench --quick` or `tfres run -- CMD`"


def cmd_show(args: argparse.Namespace) -> int:
    record = resolve_record(args.run, store=args.store)
    if args.json:
        print_json(record.to_dict())
        return 0

    render_record(record, console())
    return 0
