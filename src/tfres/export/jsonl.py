"""JSON-lines export: one JSON object per sample (``pandas.read_json(path, lines=True)``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO

from tfres.export.table import rows
from tfres.record import Record, atomic_write_bytes

__all__ = ["write_jsonl", "to_jsonl"]


def to_jsonl(record: Record) -> str:
    """The timeline as JSON lines; bucket rows also carry their ``min`` and ``max``."""
    return "".join(
        json.dumps(row, separators=(",", ":"), allow_nan=False) + "\n"
        for row in rows(record, extremes=True)
    )


def write_jsonl(record: Record, out: str | os.PathLike[str] | IO[str]) -> int:
    """Write the timeline as JSON lines to a path (atomically) or a text stream; returns rows."""
    text = to_jsonl(record)
    if isinstance(out, (str, os.PathLike)):
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, text.encode("utf-8"))
    else:
        out.write(text)
    return text.count("\n")
