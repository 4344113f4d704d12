"""Exports of a record's timeline: CSV, JSON lines and TensorBoard scalars.

    tfres.export.write_csv(record, "run.csv")
    tfres.export.write_jsonl(record, "run.jsonl")
    tfres.export.write_tensorboard(record, "logs/fit")   # next to Keras's TensorBoard logs

One row per sample, with columns named with their units (:mod:`tfres.sampler.columns`). A long
run's older part is stored as min/mean/max buckets (docs/timeline-storage.md): those come
first, one row per bucket with the bucket's means and ``bucket_seconds`` set.
"""

from __future__ import annotations

from tfres.export.csv import write_csv
from tfres.export.jsonl import write_jsonl
from tfres.export.table import rows
from tfres.export.tensorboard import write_tensorboard
from tfres.sampler.columns import column_names, flatten

__all__ = ["rows", "column_names", "flatten", "write_csv", "write_jsonl", "write_tensorboard"]
