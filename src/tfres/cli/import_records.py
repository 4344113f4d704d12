"""``tfres import FILE...``: add record files (from other machines) to the local store."""

from __future__ import annotations

import argparse
from pathlib import Path

from tfres.cli._common import add_store_option
from tfres.record import load
from tfres.store import Store

EPILOG = """\
examples:
  tfres import worker0.json worker1.json.gz      records copied from the workers' machines
  tfres import runs/*.json --store team.sqlite
then: tfres report --job NAME, tfres compare 3 4

Every file is read before any is added: one that is not a tfres record stops the import
with its name and nothing is added. A record already in the store (same id) is replaced
and keeps its number.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "import",
        help="add record files (e.g. from other machines) to the local store",
        description="Add record files written by tfres on any machine (--out, tfres export, "
        "tfres bench) to the local store, so that tfres runs, report --job and compare "
        "see them beside the local runs.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", metavar="FILE", nargs="+", help="record files (.json or .json.gz)")
    add_store_option(p)
    p.set_defaults(func=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:

    records = [load(Path(name)) for name in args.files]  # all readable, or none added
    with Store(args.store) as store:
        for name, record in zip(args.files, records, strict=True):
            number = store.save(record)
            what = f"job {record.job} worker {record.worker}" if record.job else record.kind
            print(f"{name}: run {number} ({what}, {record.host or 'unknown host'})")
        path = store.path
    print(f"{len(records)} record(s) in {path}")
    return 0
