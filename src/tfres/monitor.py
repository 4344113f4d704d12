"""``tfres.monitor()``: watch a block of Python code and get a run record.

    with tfres.monitor(label="exp1") as m:
        model.fit(x, y, epochs=3)
        m.mark("after fit")
    m.record  # the Record, also saved to the local store
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from tfres.record import Record, save
from tfres.sampler import DEFAULT_INTERVAL_SECONDS, Sampler
from tfres.timeline import Mark

__all__ = ["Monitor", "monitor"]

log = logging.getLogger("tfres")


def _utc(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


class Monitor:
    """A sampler plus the record it fills; made by :func:`monitor`."""

    def __init__(
        self,
        label: str | None = None,
        *,
        interval: float = DEFAULT_INTERVAL_SECONDS,
        kind: str = "monitor",
        store: bool | str | os.PathLike[str] = True,
        out: str | os.PathLike[str] | None = None,
        sampler: Sampler | None = None,
    ) -> None:
        self.sampler = sampler or Sampler(interval)
        self.record = Record(kind=kind, label=label, interval_seconds=self.sampler.interval)
        self._store = store
        self._out = out
        self._wall_start = 0.0
        #: the record's number in the local store after exit, if it was saved there
        self.store_number: int | None = None

    def __enter__(self) -> Monitor:
        from tfres.fingerprint import fingerprint

        self.record.fingerprint = fingerprint().to_dict()
        self._wall_start = time.time()
        self.record.started_at = _utc(self._wall_start)
        self.sampler.start()
        return self

    def mark(self, label: str) -> Mark:
        """Put a labelled instant on the timeline (``m.mark("epoch 2")``)."""
        return self.sampler.mark(label)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """A named span of the timeline: ``with m.phase("eval"): ...``."""
        with self.sampler.phase(name):
            yield

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.sampler.stop()
        r = self.record
        r.ended_at = _utc(time.time())
        r.elapsed_seconds = round(self.sampler.elapsed(), 6)
        r.samples = self.sampler.samples
        r.marks = self.sampler.marks
        r.phases = self.sampler.phases
        r.notes.extend(n for n in self.sampler.notes if n not in r.notes)
        if exc_type is None:
            r.status = "ok"
        elif issubclass(exc_type, KeyboardInterrupt):
            r.status, r.end_reason = "partial", "interrupted (KeyboardInterrupt)"
        else:
            r.status, r.end_reason = "failed", f"{exc_type.__name__}: {exc}"
        self._persist()

    def _persist(self) -> None:
        try:
            if self._out is not None:
                save(self.record, Path(self._out))
            if self._store is not False:
                from tfres.store import Store

                path = None if self._store is True else self._store
                with Store(path) as s:
                    self.store_number = s.save(self.record)
        except Exception as err:  # saving must never hide the user's own exception
            log.warning("tfres: could not save the record of %s: %s", self.record.label, err)


def monitor(
    label: str | None = None,
    *,
    interval: float = DEFAULT_INTERVAL_SECONDS,
    store: bool | str | os.PathLike[str] = True,
    out: str | os.PathLike[str] | None = None,
) -> Monitor:
    """Watch the code in a ``with`` block; the record is ``m.record`` afterwards.

    ``store=False`` keeps the record out of the local store; ``out`` also writes it to a file.

        with tfres.monitor(label="exp1") as m:
            model.fit(x, y)
    """
    return Monitor(label, interval=interval, store=store, out=out)
