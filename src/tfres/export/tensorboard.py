"""TensorBoard export: the timeline as scalars, next to the user's own training curves.

Written with TensorBoard's own record writer and protos (no TensorFlow needed or imported).
Each column becomes a scalar tag ``tfres/<column>`` (``tfres/process_rss_bytes``,
``tfres/gpu0_util_percent``); the step is milliseconds since the run started and the wall
time is the real time of the sample, so TensorBoard's "Relative" and "Wall" axes line the
resource curves up with ``keras.callbacks.TensorBoard``'s. Marks become text summaries under
``tfres/marks``.
"""

from __future__ import annotations

import calendar
import os
import socket
import time
from pathlib import Path
from typing import Any

from tfres.errors import MissingDependencyError
from tfres.export.table import rows
from tfres.record import Record

__all__ = ["write_tensorboard", "TAG_PREFIX"]

TAG_PREFIX = "tfres/"


def _start_wall_time(record: Record) -> float:
    for text in (record.started_at, record.created_at):
        if text:
            try:
                return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")))
            except ValueError:
                continue
    return time.time()


def write_tensorboard(record: Record, logdir: str | os.PathLike[str]) -> Path:
    """Write the timeline of ``record`` as TensorBoard scalars into ``logdir``; returns the file.

    Raises :class:`~tfres.errors.MissingDependencyError` when tensorboard is not installed.

        write_tensorboard(record, "logs/fit")   # then: tensorboard --logdir logs
    """
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.summary.writer.record_writer import RecordWriter
    except ImportError as err:
        raise MissingDependencyError(
            "tensorboard", "exporting to TensorBoard", "tensorboard"
        ) from err
    folder = Path(logdir)
    folder.mkdir(parents=True, exist_ok=True)
    t0 = _start_wall_time(record)
    name = f"events.out.tfevents.{int(t0):010d}.{socket.gethostname()}.{os.getpid()}.tfres"
    target = folder / name
    tmp = folder / f".tfres-export-{os.getpid()}.tmp"  # no "tfevents": TensorBoard skips it
    events: list[Any] = [
        event_pb2.Event(
            wall_time=t0,
            file_version="brain.Event:2",
            source_metadata=event_pb2.SourceMetadata(writer="tfres"),
        )
    ]
    for row in rows(record):
        t = row.get("t_seconds")
        if t is None:
            continue
        values = [
            summary_pb2.Summary.Value(tag=TAG_PREFIX + key, simple_value=float(value))
            for key, value in row.items()
            if key not in ("t_seconds", "bucket_seconds")
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        ]
        if values:
            events.append(
                event_pb2.Event(
                    wall_time=t0 + float(t),
                    step=int(round(float(t) * 1000)),
                    summary=summary_pb2.Summary(value=values),
                )
            )
    for mark in record.marks:
        text = summary_pb2.Summary.Value(tag=TAG_PREFIX + "marks")
        text.metadata.plugin_data.plugin_name = "text"
        text.tensor.dtype = 7  # DT_STRING
        text.tensor.string_val.append(mark.label.encode("utf-8"))
        events.append(
            event_pb2.Event(
                wall_time=t0 + mark.t_seconds,
                step=int(round(mark.t_seconds * 1000)),
                summary=summary_pb2.Summary(value=[text]),
            )
        )
    try:
        # owner-only, like every file tfres writes (docs/reliability.md)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            writer = RecordWriter(fh)
            for event in events:
                writer.write(event.SerializeToString())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        raise
    return target
