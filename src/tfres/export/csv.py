"""CSV export: one row per sample, a header of unit-named columns; empty cell = not read."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import IO

from tfres.export.table import rows
from tfres.record import Record, atomic_write_bytes
from tfres.sampler.columns import column_names

__all__ = ["write_csv", "to_csv"]


def to_csv(record: Record) -> str:
    """The timeline of ``record`` as CSV text (see :func:`tfres.export.rows`)."""
    table = rows(record)
    names = column_names(table)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=names, restval="", lineterminator="\n")
    writer.writeheader()
    for row in table:
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return buffer.getvalue()


def write_csv(record: Record, out: str | os.PathLike[str] | IO[str]) -> int:
    """Write the timeline as CSV to a path (atomically) or an open text stream; returns rows.

    write_csv(record, "run.csv")   # pandas.read_csv("run.csv")
    """
    text = to_csv(record)
    if isinstance(out, (str, os.PathLike)):
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, text.encode("utf-8"))
    else:
        out.write(text)
    return max(0, text.count("\n") - 1)
