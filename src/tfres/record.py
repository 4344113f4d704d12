"""The run record: one versioned JSON document that every tfres feature writes and reads.

A record holds the machine fingerprint, what ran (command, label, start/end, exit status),
the timeline of samples, marks and phases, per-step times, workload results and findings.
The format is documented in ``docs/record-format.md``. :func:`save` is atomic;
:func:`load` turns every way a file can be wrong into one :class:`RecordError` line.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import secrets
import tempfile
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from tfres.errors import RecordError
from tfres.timeline import Mark, Phase, Sample
from tfres.version import __version__

__all__ = ["FORMAT", "VERSION", "Record", "new_record_id", "save", "load", "loads", "dumps"]

#: The value of the ``format`` key: what tells a tfres record from any other JSON.
FORMAT = "tfres.record"
#: The record version this tfres writes; it reads this one and every older one.
VERSION = 1

STATUSES = ("running", "ok", "failed", "partial")


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
    #: per-step times: {"t_seconds", "duration_seconds", "epoch", "step", "input_wait_seconds"?}
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
    """The record as compact JSON text (strict JSON: NaN and infinities are written as null)."""
    data = record.to_dict()
    try:
        return json.dumps(data, separators=(",", ":"), allow_nan=False, default=_json_default)
    except ValueError:  # a NaN or infinity somewhere: JSON has no such number
        return json.dumps(
            _finite(data), separators=(",", ":"), allow_nan=False, default=_json_default
        )


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
        data = json.loads(text)
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
    return Record.from_dict(data, source=source)


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
    """Read a record file (``.json`` or ``.json.gz``); raises :class:`RecordError` in one line."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise RecordError(
            f"record {p} does not exist; check the path or run `tfres runs`"
        ) from None
    except IsADirectoryError:
        raise RecordError(f"record {p} is a folder, not a file") from None
    except OSError as err:
        raise RecordError(f"record {p} cannot be read ({err.strerror})") from err
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError) as err:
            raise RecordError(
                f"record {p} is a truncated or damaged gzip file; re-run or pick another record"
            ) from err
    return loads(raw, source=f"record {p}")
