"""A record's timeline as flat rows, the one table every export writes."""

from __future__ import annotations

from typing import Any

from tfres.record import Record
from tfres.sampler.columns import flatten

__all__ = ["rows"]


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
