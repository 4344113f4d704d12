"""The run record: one versioned JSON document that every tfres feature writes and reads.

A record holds the machine fingerprint, what ran (command, label, start/end, exit status),
the timeline of samples, marks and phases, per-step times, workload results and findings.
The format is documented in ``docs/record-format.md``. :func:`save` is atomic;
:func:`load` turns every way a file can be wrong into one :class:`RecordError` line.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import secrets
import stat
import tempfile
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from tfres.errors import RecordError
from tfres.record_schema import check_record
from tfres.redact import redact_command, safe_text
from tfres.timeline import Mark, Phase, Sample
from tfres.units import format_bytes
from tfres.version import __version__

__all__ = ["FORMAT", "VERSION", "Record", "new_record_id", "save", "load", "loads", "dumps"]

#: The value of the ``format`` key: what tells a tfres record from any other JSON.
FORMAT = "tfres.record"
#: The record version this tfres writes; it reads this one and every older one.
VERSION = 1

STATUSES = ("running", "ok", "failed", "partial")
#: the most a record file (or a stored record, once uncompressed) may hold: 20 times the
#: largest record a 24-hour run writes (docs/timeline-storage.md)
MAX_RECORD_BYTES = 256 * 2**20


def new_record_id() -> str:
    """A sortable, unique id: UTC time to the second plus 6 random hex digits."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class Record:
    """A run of something under tfres: ``tfres run``, ``tfres bench`` or ``tfres.monitor()``.

    ``status`` is ``"ok"`` (finished, exit 0), ``"failed"`` (finished with an error),
    ``"partial"`` (interrupted, killed, or the budget ended it; ``end_reason`` says which)
    or ``"running"`` while it is being written.
    """

    kind: str = "monitor"
    label: str | None = None
    id: str = field(default_factory=new_record_id)
    version: int = VERSION
    tfres_version: str = ""
    created_at: str = field(default_factory=_utc_now)
    started_at: str | None = None
    ended_at: str | None = None
    elapsed_seconds: float | None = None
    command: list[str] | None = None
    status: str = "running"
    exit_code: int | None = None
    signal: str | None = None
    end_reason: str | None = None
    job: str | None = None
    worker: int | None = None
    #: the machine fingerprint (see :func:`tfres.machine.fingerprint`), as a dict
    fingerprint: dict[str, Any] = field(default_factory=dict)
    interval_seconds: float | None = None
    #: full-resolution samples (the recent window on long runs)
    samples: list[Sample] = field(default_factory=list)
    #: min/mean/max buckets for what fell out of the full-resolution window
    aggregates: list[dict[str, Any]] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=list)
    #: per-step times: {"t_seconds", "duration_seconds", "epoch", "step", "input_wait_seconds"?,
    #: "profiler_seconds"? (what the profiler window added to the step),
    #: "callback_seconds"?, "callback_written_bytes"? (a Keras fit step's batch-end callbacks)}
    steps: list[dict[str, Any]] = field(default_factory=list)
    #: results of standard workloads (``tfres bench``)
    workloads: list[dict[str, Any]] = field(default_factory=list)
    #: diagnosis findings (see :mod:`tfres.diagnosis.diagnose`)
    findings: list[dict[str, Any]] = field(default_factory=list)
    #: what controlled the run: memory budget, device configuration
    control: dict[str, Any] = field(default_factory=dict)
    #: what could not be read or what went wrong while sampling, in words
    notes: list[str] = field(default_factory=list)
    #: room for features to add data without a version bump; readers ignore unknown keys
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # what a record keeps of a command line: secrets masked, text any reader takes
        if isinstance(self.command, (list, tuple)):
            self.command = redact_command(self.command)
        if isinstance(self.label, str):
            self.label = safe_text(self.label)
        if not self.tfres_version:
            self.tfres_version = __version__

    @property
    def host(self) -> str | None:
        """The host name from the fingerprint, if there is one."""
        return (self.fingerprint.get("host") or {}).get("hostname")

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"format": FORMAT}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("samples", "marks", "phases"):
                value = [item.to_dict() for item in value]
            elif f.name == "command" and value is not None:
                value = redact_command(value)  # set after the record was made, too
            d[f.name] = value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, source: str = "record") -> Record:
        """Build a record from its dict; raises :class:`RecordError` naming ``source``."""
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise RecordError(
                f'{source} is JSON but not a tfres record (no "format": "{FORMAT}"); '
                "pick a file written by tfres"
            )
        version = d.get("version")
        if not isinstance(version, int) or version < 1:
            raise RecordError(f"{source} has no valid record version (got {version!r})")
        if version > VERSION:
            raise RecordError(
                f"{source} was written by a newer tfres (record version {version}; this tfres "
                f"reads up to {VERSION}); upgrade with: pip install -U tfres"
            )
        d = check_record(d, source=source)
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in d.items() if k in known}
        try:
            kwargs["samples"] = [Sample.from_dict(s) for s in d.get("samples") or []]
            kwargs["marks"] = [Mark.from_dict(m) for m in d.get("marks") or []]
            kwargs["phases"] = [Phase.from_dict(p) for p in d.get("phases") or []]
            return cls(**kwargs)
        except (TypeError, KeyError, ValueError, AttributeError) as err:
            raise RecordError(
                f"{source} is a damaged tfres record ({err}); re-run or pick another record"
            ) from err


def dumps(record: Record) -> str:
    """The record as compact JSON text that encodes as UTF-8.

    Strict JSON: NaN and infinities are written as null. Text that is not valid Unicode
    (bytes of a non-UTF-8 file name) is written with ``\\xNN`` escapes
    (:func:`tfres.redact.safe_text`).
    """
    data = record.to_dict()
    try:
        text = _compact(data)
    except ValueError:  # a NaN or infinity somewhere: JSON has no such number
        data = _finite(data)
        text = _compact(data)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _compact(_safe_strings(data))
    return text


def _compact(data: Any) -> str:
    return json.dumps(
        data, separators=(",", ":"), allow_nan=False, ensure_ascii=False, default=_json_default
    )


def _safe_strings(obj: Any) -> Any:
    """``obj`` with every text (keys too) made valid Unicode (tuples become lists)."""
    if isinstance(obj, str):
        return safe_text(obj)
    if isinstance(obj, dict):
        return {safe_text(str(k)): _safe_strings(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_safe_strings(v) for v in obj]
    if hasattr(obj, "to_dict"):
        return _safe_strings(obj.to_dict())
    return obj


def _finite(obj: Any) -> Any:
    """``obj`` with every non-finite float replaced by None (tuples become lists)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if hasattr(obj, "to_dict"):
        return _finite(obj.to_dict())
    return obj


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (set, tuple)):
        return list(obj)
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    raise TypeError(f"cannot store {type(obj).__name__} in a record")


def loads(text: str | bytes, *, source: str = "record") -> Record:
    """Parse record JSON; every problem becomes one :class:`RecordError` naming ``source``."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise RecordError(
                f"{source} is not text (byte {err.start} is not UTF-8); pick a tfres record"
            ) from err
    if not text.strip():
        raise RecordError(f"{source} is empty; re-run or pick another record")
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise RecordError(
            f"{source} nests too deeply to be a tfres record; pick a file written by tfres"
        ) from None
    except _NotANumber as err:
        raise RecordError(
            f"{source} holds {err}, which is not a JSON number (tfres writes null); "
            "pick a file written by tfres"
        ) from None
    except json.JSONDecodeError as err:
        size = len(text.encode("utf-8"))
        if _ends_early(text, err) and text.lstrip().startswith("{"):
            raise RecordError(
                f"{source} is truncated (ends at byte {size}); re-run or pick another record"
            ) from err
        raise RecordError(
            f"{source} is not valid JSON (line {err.lineno}, column {err.colno}: {err.msg}); "
            "pick a file written by tfres"
        ) from err
    if "\\ud" in text:  # escaped surrogates: bytes that were never valid Unicode
        data = _safe_strings(data)
    return Record.from_dict(data, source=source)


class _NotANumber(ValueError):
    """``NaN`` or ``Infinity`` in the text: Python's JSON reader takes them, JSON does not."""


def _no_constant(name: str) -> Any:
    raise _NotANumber(name)


def _ends_early(text: str, err: json.JSONDecodeError) -> bool:
    """Whether a JSON error means the text stops too soon (rather than being wrong)."""
    if err.msg.startswith("Extra data"):
        return False
    if err.pos >= len(text.rstrip()) - 1 or err.msg.startswith("Unterminated"):
        return True
    # the error sits in the last, cut-off token: ``nu`` of null, ``1.`` of a number
    tail = text[err.pos :].rstrip()
    return bool(tail) and not any(c in tail for c in ',:{}[]" \t\n')


def save(record: Record, path: str | os.PathLike[str]) -> Path:
    """Write ``record`` to ``path`` atomically (temp file, fsync, rename); ``.gz`` compresses.

    A reader never sees a half-written file, and a crash mid-write leaves the old file.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    data = dumps(record).encode("utf-8")
    if target.suffix == ".gz":
        data = gzip.compress(data, mtime=0)
    atomic_write_bytes(target, data)
    return target


def atomic_write_bytes(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` through a temp file in the same folder and a rename."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def load(path: str | os.PathLike[str]) -> Record:
    """Read a record file (``.json`` or ``.json.gz``); raises :class:`RecordError` in one line.

    Only a regular file is read (not a FIFO, a device or ``/dev/zero``), and at most
    :data:`MAX_RECORD_BYTES`, compressed or not.
    """
    p = Path(path)
    raw = _read_regular_file(p)
    if raw[:2] == b"\x1f\x8b":
        raw = gunzip_record(raw, source=f"record {p}")
    return loads(raw, source=f"record {p}")


def _read_regular_file(p: Path) -> bytes:
    """The bytes of ``p``, refusing what is no regular file or is larger than the cap."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; a regular file ignores it
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise RecordError(
            f"record {p} does not exist; check the path or run `tfres runs`"
        ) from None
    except IsADirectoryError:
        raise RecordError(f"record {p} is a folder, not a file") from None
    except OSError as err:
        raise RecordError(f"record {p} cannot be read ({err.strerror})") from err
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise RecordError(f"record {p} is a folder, not a file")
        raise RecordError(
            f"record {p} is not a regular file (a device, FIFO or socket); "
            "pick a record file written by tfres"
        )
    if info.st_size > MAX_RECORD_BYTES:
        os.close(fd)
        raise _too_large(f"record {p}", info.st_size)
    with os.fdopen(fd, "rb") as fh:
        try:
            raw = fh.read(MAX_RECORD_BYTES + 1)
        except OSError as err:
            raise RecordError(f"record {p} cannot be read ({err.strerror})") from err
    if len(raw) > MAX_RECORD_BYTES:  # it grew while we read
        raise _too_large(f"record {p}", len(raw))
    return raw


def _too_large(source: str, size: int) -> RecordError:
    return RecordError(
        f"{source} is {format_bytes(size)} or more, over the {format_bytes(MAX_RECORD_BYTES)} "
        "a tfres record may hold; pick a record file written by tfres"
    )


def gunzip_record(raw: bytes, *, source: str) -> bytes:
    """Uncompress a gzip-compressed record, at most :data:`MAX_RECORD_BYTES` of it."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as fh:
            data = fh.read(MAX_RECORD_BYTES + 1)
    except (EOFError, OSError, gzip.BadGzipFile) as err:
        raise RecordError(
            f"{source} is a truncated or damaged gzip file; re-run or pick another record"
        ) from err
    if len(data) > MAX_RECORD_BYTES:
        raise _too_large(f"{source} (uncompressed)", len(data))
    return data
