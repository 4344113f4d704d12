"""One record lifecycle: fingerprint -> sample -> finish -> diagnose -> save.

``tfres.monitor()``, ``tfres run``, ``tfres bench`` and the Keras ``ResourceMonitor`` all
make their records through a :class:`RecordSession`:

    session = RecordSession(Record(kind="run"), Sampler(0.1), store=True, out="r.json")
    session.check_outputs()        # before the work: an unwritable --out or store fails now
    session.take_fingerprint()
    session.start()                # started_at, the sampler thread
    ...                            # the work
    session.finish()               # stop the sampler, copy its timeline into the record
    saved = session.save()         # diagnose, then the file and the store (with a fallback)
    saved.store_number, saved.error, saved.fallback_path

Saving never raises: a record that cannot go where it was asked goes to
``./tfres-<id>.json`` (or the temp folder), and :class:`SavedRecord` says so in one line.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfres.errors import RecordError, StoreError
from tfres.machine.fingerprint import fingerprint
from tfres.record import Record, save
from tfres.sampler.sampler import Sampler
from tfres.store import Store

__all__ = ["RecordSession", "SavedRecord", "check_output_path", "finish_record", "utc"]

log = logging.getLogger("tfres")

StoreArg = bool | str | os.PathLike[str]


def utc(ts: float | None = None) -> str:
    """``ts`` (default: now) as the records' UTC time stamp."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if ts is None else ts))


def check_output_path(path: str | os.PathLike[str], *, what: str = "--out") -> Path:
    """Raise :class:`RecordError` in one line when a file cannot be written at ``path``.

    Checks what an atomic write needs: ``path`` is not a folder, and a temporary file can be
    made in its folder (or in the nearest existing ancestor, where the folders are missing).
    Nothing is left behind.
    """
    target = Path(path)
    if str(path) == "":
        raise RecordError(f"{what} is empty; give a file name like run.json")
    if target.is_dir():
        raise RecordError(f"{what} {target} is a folder; give a file name inside it")
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=folder)
    except OSError as err:
        raise RecordError(
            f"{what} {target} cannot be written ({err.strerror or err} in {folder}); "
            "pick another path"
        ) from None
    os.close(fd)
    os.unlink(probe)
    return target


def finish_record(record: Record, sampler: Sampler) -> None:
    """Copy what ``sampler`` gathered (timeline, marks, phases, notes, facts) into ``record``.

    ``record.extra["top_processes"]`` gets the busiest other processes over the run.
    """
    record.elapsed_seconds = round(sampler.elapsed(), 6)
    record.samples = sampler.samples
    record.aggregates = sampler.aggregates
    record.marks = sampler.marks
    record.phases = sampler.phases
    record.notes.extend(n for n in sampler.notes if n not in record.notes)
    record.extra.update(sampler.extra)
    record.extra["timeline"] = sampler.storage()
    record.extra["sampler_cpu_seconds"] = round(sampler.cpu_seconds, 6)
    top = sampler.top_processes()
    if top is not None and sampler.others is not None:
        # read by the background_load rule (the fingerprint's list is a 0.2 s snapshot)
        record.extra["top_processes"] = top
        record.extra["top_processes_source"] = sampler.others.source()


@dataclass
class SavedRecord:
    """Where a record went: its number in the store, its file, or the fallback copy.

    ``error`` is None when it went everywhere it was asked to go; else one line naming what
    failed and where the fallback copy is (``fallback_path``; None if even that failed).
    """

    record: Record
    store_number: int | None = None
    store_path: Path | None = None
    out_path: Path | None = None
    fallback_path: Path | None = None
    error: str | None = None


class RecordSession:
    """The lifecycle of one record (see the module docstring).

    ``store=True`` saves to the local store (a path: that store; False: nowhere); ``out``
    also writes a file. ``sampler=None`` makes a session without a timeline (the Keras
    callback's ``sample=False``): :meth:`finish` then only closes the record.
    """

    def __init__(
        self,
        record: Record,
        sampler: Sampler | None = None,
        *,
        store: StoreArg = True,
        out: str | os.PathLike[str] | None = None,
    ) -> None:
        self.record = record
        self.sampler = sampler
        self.store = store
        self.out = out
        self._t0 = time.perf_counter()
        self._finished = False
        if sampler is not None:
            record.interval_seconds = sampler.interval

    # -- before the work -------------------------------------------------------------------
    def check_outputs(self) -> None:
        """Raise :class:`RecordError`/:class:`StoreError` now if the record could not be saved."""
        if self.out is not None:
            check_output_path(self.out)
        if self.store is not False:
            from tfres.store import Store

            with Store(None if self.store is True else self.store):
                pass

    def take_fingerprint(self, **options: Any) -> None:
        """Put the machine fingerprint in the record; a failure becomes a note, never an error."""

        try:
            self.record.fingerprint = fingerprint(**options).to_dict()
        except Exception as err:  # the run matters more than the fingerprint
            log.warning("tfres: fingerprint failed: %s", err)
            self.record.notes.append(f"the machine fingerprint could not be taken: {err}")

    def start(self) -> None:
        """Stamp ``started_at`` and start the sampler."""
        self.record.started_at = utc()
        self._t0 = time.perf_counter()
        if self.sampler is not None:
            self.sampler.start()

    def elapsed(self) -> float:
        """Seconds since :meth:`start`, on the timeline's clock when there is one."""
        if self.sampler is not None:
            return self.sampler.elapsed()
        return time.perf_counter() - self._t0

    # -- after the work --------------------------------------------------------------------
    def finish(self) -> None:
        """Stop the sampler and copy the timeline into the record (once; later calls: no-op)."""
        if self._finished:
            return
        self._finished = True
        self.record.ended_at = utc()
        if self.sampler is None:
            self.record.elapsed_seconds = round(self.elapsed(), 6)
            return
        self.sampler.stop()
        finish_record(self.record, self.sampler)

    def diagnose(self) -> None:
        """Fill ``record.findings``; a rule that breaks becomes a note, never a lost record."""
        try:
            from tfres.diagnosis.diagnose import diagnose

            self.record.findings = [f.to_dict() for f in diagnose(self.record)]
        except Exception as err:
            log.warning("tfres: diagnosis failed: %s", err)
            self.record.notes.append(f"diagnosis failed: {err}")

    def save(self, *, diagnose: bool = True) -> SavedRecord:
        """Diagnose, then write the file and the store; never raises (see :class:`SavedRecord`)."""
        self.finish()
        if diagnose:
            self.diagnose()
        saved = SavedRecord(self.record)
        errors: list[str] = []
        if self.out is not None:
            try:
                saved.out_path = save(self.record, Path(self.out))
            except Exception as err:
                errors.append(f"could not write {self.out}: {_why(err)}")
        if self.store is not False:
            self._save_to_store(saved, errors)
        if errors:
            if saved.out_path is None and saved.store_number is None:  # never lose a run
                saved.fallback_path = self._fallback(errors)
            saved.error = "; ".join(errors)
            log.warning("tfres: %s", saved.error)
        return saved

    def _save_to_store(self, saved: SavedRecord, errors: list[str]) -> None:

        store = self.store
        assert store is not False
        try:
            with Store(None if store is True else store) as s:
                saved.store_number = s.save(self.record)
                saved.store_path = s.path
        except StoreError as err:
            errors.append(str(err))
        except Exception as err:
            errors.append(f"the store could not save the record: {_why(err)}")

    def _fallback(self, errors: list[str]) -> Path | None:
        """Keep the run beside the user (or in the temp folder) when it could not go elsewhere."""
        name = f"tfres-{self.record.id}.json"
        for folder in (Path.cwd(), Path(tempfile.gettempdir())):
            path = folder / name
            try:
                save(self.record, path)
            except Exception as err:
                errors.append(f"could not write {path} either: {_why(err)}")
                continue
            errors.append(f"the record was written to {path} instead")
            return path
        return None


def _why(err: BaseException) -> str:
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return str(err) or type(err).__name__
