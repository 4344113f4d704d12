"""Exports of a record's timeline: CSV, JSON lines and TensorBoard scalars.

    tfres.export.write_csv(record, "run.csv")
    tfres.export.write_jsonl(record, "run.jsonl")
    tfres.export.write_tensorboard(record, "logs/fit")   # next to Keras's TensorBoard logs

One row per sample, with columns named with their units (:mod:`tfres.sampler.columns`). A long
run's older part is stored as min/mean/max buckets (docs/timeline-storage.md): those come
first, one row per bucket with the bucket's means and ``bucket_seconds`` set.
"""

from __future__ import annotations

from typing import Any

from tfres.export.csv import write_csv
from tfres.export.jsonl import write_jsonl
from tfres.export.tensorboard import write_tensorboard
from tfres.record import Record
from tfres.sampler.columns import column_names, flatten

__all__ = ["rows", "column_names", "flatten", "write_csv", "write_jsonl", "write_tensorboard"]


def rows(
    record: Record, *, aggregates: bool = True, extremes: bool = False
) -> list[dict[str, Any]]:
    """The timeline of ``record`` as flat rows, oldest first.

    With ``aggregates`` the buckets before the full-resolution window come first: their row
    holds the bucket's means, ``t_seconds`` is the bucket start and ``bucket_seconds`` its
    width (``None`` on sample rows). ``extremes`` adds the bucket's ``min`` and ``max`` dicts.
    """
    out: list[dict[str, Any]] = []
    if aggregates and record.aggregates:
        for bucket in record.aggregates:
            start = bucket.get("start_seconds")
            end = bucket.get("end_seconds")
            row: dict[str, Any] = {"t_seconds": start}
            row.update(bucket.get("mean") or {})
            row["bucket_seconds"] = None if start is None or end is None else round(end - start, 6)
            if extremes:
                row["min"] = bucket.get("min") or {}
                row["max"] = bucket.get("max") or {}
            out.append(row)
    with_buckets = bool(out)
    for sample in record.samples:
        row = flatten(sample)
        if with_buckets:
            row["bucket_seconds"] = None
        out.append(row)
    return out
