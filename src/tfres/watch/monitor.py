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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from tfres.record import Record, save
from tfres.sampler.sampler import DEFAULT_INTERVAL_SECONDS, Sampler
from tfres.timeline import Mark, Phase

__all__ = ["Monitor", "monitor", "finish_record"]

log = logging.getLogger("tfres")


def _utc(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


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


class Monitor:
    """A sampler plus the record it fills; made by :func:`monitor`.

    ``m.record`` is filled when the ``with`` block ends; ``m.latest`` is the newest sample
    while it runs, ``m.store_number`` the record's number in the store afterwards.
    """

    def __init__(
        self,
        label: str | None = None,
        *,
        interval: float = DEFAULT_INTERVAL_SECONDS,
        kind: str = "monitor",
        store: bool | str | os.PathLike[str] = True,
        out: str | os.PathLike[str] | None = None,
        sampler: Sampler | None = None,
        gpus: bool | Sequence[int] = True,
        prometheus: str | int | None = None,
        job: str | None = None,
        worker: int | None = None,
    ) -> None:
        self.sampler = sampler or Sampler(interval, gpus=gpus)
        self.record = Record(
            kind=kind,
            label=label,
            interval_seconds=self.sampler.interval,
            job=job,
            worker=worker,
        )
        self._store = store
        self._out = out
        self._prometheus_address = prometheus
        self.prometheus: Any = None
        self._entered = False
        #: the record's number in the local store after exit, if it was saved there
        self.store_number: int | None = None

    def __enter__(self) -> Monitor:
        from tfres.machine.fingerprint import fingerprint

        try:
            self.record.fingerprint = fingerprint().to_dict()
        except Exception as err:  # a fingerprint that fails must not stop the training
            log.warning("tfres: fingerprint failed: %s", err)
            self.record.notes.append(f"the machine fingerprint could not be taken: {err}")
        if self._prometheus_address is not None:
            from tfres.watch.prometheus import PrometheusExporter

            self.prometheus = PrometheusExporter(
                self._prometheus_address, job=self.record.job, worker=self.record.worker
            )
            self.sampler.add_listener(self.prometheus.update)
            self.record.extra["prometheus_url"] = self.prometheus.url
        self.record.started_at = _utc(time.time())
        self.sampler.start()
        self._entered = True
        return self

    def mark(self, label: str) -> Mark:
        """Put a labelled instant on the timeline (``m.mark("epoch 2")``)."""
        return self.sampler.mark(label)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """A named span of the timeline: ``with m.phase("eval"): ...``."""
        with self.sampler.phase(name):
            yield

    def add_phase(self, name: str, start_seconds: float, end_seconds: float | None) -> Phase:
        """Add a span timed elsewhere (``start_seconds`` on :meth:`elapsed`'s clock)."""
        return self.sampler.add_phase(name, start_seconds, end_seconds)

    def elapsed(self) -> float:
        """Seconds since the block started, on the timeline's clock."""
        return self.sampler.elapsed()

    def note(self, text: str) -> None:
        """Add a note, in words, to the record."""
        self.sampler.note(text)

    @property
    def latest(self) -> Any:
        """The newest :class:`~tfres.timeline.Sample` (None before the first)."""
        return self.sampler.latest

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.sampler.stop()
        if self.prometheus is not None:
            self.prometheus.close()
        r = self.record
        r.ended_at = _utc(time.time())
        finish_record(r, self.sampler)
        if exc_type is None:
            r.status = "ok"
        elif issubclass(exc_type, KeyboardInterrupt):
            r.status, r.end_reason = "partial", "interrupted (KeyboardInterrupt)"
        else:
            r.status, r.end_reason = "failed", f"{exc_type.__name__}: {exc}"
        self._diagnose()
        self._persist()

    def _diagnose(self) -> None:
        try:
            from tfres.diagnosis.diagnose import diagnose

            self.record.findings = [f.to_dict() for f in diagnose(self.record)]
        except Exception as err:  # a rule that breaks must not lose the record
            log.warning("tfres: diagnosis failed: %s", err)
            self.record.notes.append(f"diagnosis failed: {err}")

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
    gpus: bool | Sequence[int] = True,
    prometheus: str | int | None = None,
    job: str | None = None,
    worker: int | None = None,
) -> Monitor:
    """Watch the code in a ``with`` block; the record is ``m.record`` afterwards.

    ``store=False`` keeps the record out of the local store (a path picks another store);
    ``out`` also writes it to a file. ``gpus`` picks the GPUs (NVML indices; True: all the
    run can see; on a machine without an NVIDIA driver there are none and the record says
    why). ``prometheus="9100"`` or ``"0.0.0.0:9100"`` serves the live values for Prometheus
    while the block runs (127.0.0.1 unless a host is given), labelled ``job``/``worker``.
    The TensorFlow allocator is read once the block's code has started TensorFlow.

        with tfres.monitor(label="exp1") as m:
            model.fit(x, y)
            m.mark("fit done")
        print(m.record.samples[-1].process_rss_bytes)
    """
    return Monitor(
        label,
        interval=interval,
        store=store,
        out=out,
        gpus=gpus,
        prometheus=prometheus,
        job=job,
        worker=worker,
    )
