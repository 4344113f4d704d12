"""``tfres.monitor()``: watch a block of Python code and get a run record.

with tfres.monitor(label="exp1") as m:
    model.fit(x, y, epochs=3)
    m.mark("after fit")
m.record  # the Record, also saved to the local store
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from tfres.record import Record
from tfres.sampler.sampler import DEFAULT_INTERVAL_SECONDS, Sampler
from tfres.session import RecordSession
from tfres.timeline import Mark, Phase

__all__ = ["Monitor", "monitor"]

log = logging.getLogger("tfres")


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
        mlflow: str | bool | None = None,
        mlflow_html: Callable[[Record], bytes] | None = None,
    ) -> None:
        self._mlflow_sink: Any = None
        if mlflow is not None and mlflow is not False:
            from tfres.watch.mlflow import tracking_uri
            from tfres.watch.mlflow_sink import MlflowSink

            self._mlflow_sink = MlflowSink(
                tracking_uri(mlflow), run_name=label, in_process=True, html=mlflow_html
            )
        #: where the record went in MLflow (``MlflowResult``) after exit, with ``mlflow=``
        self.mlflow: Any = None
        self.sampler = sampler or Sampler(interval, gpus=gpus)
        self.record = Record(kind=kind, label=label, job=job, worker=worker)
        self.session = RecordSession(self.record, self.sampler, store=store, out=out)
        self._prometheus_address = prometheus
        self.prometheus: Any = None
        self._entered = False
        #: the record's number in the local store after exit, if it was saved there
        self.store_number: int | None = None

    def __enter__(self) -> Monitor:
        self.session.take_fingerprint()
        if self._prometheus_address is not None:
            from tfres.watch.prometheus import PrometheusExporter

            self.prometheus = PrometheusExporter(
                self._prometheus_address, job=self.record.job, worker=self.record.worker
            )
            self.sampler.add_listener(self.prometheus.update)
            self.prometheus.follow_steps(self.record.steps)
            self.record.extra["prometheus_url"] = self.prometheus.url
        if self._mlflow_sink is not None:
            self._mlflow_sink.start(self.record)  # from its own thread: never waits here
            self.sampler.add_listener(self._mlflow_sink.on_sample)
        self.session.start()
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
        self.session.finish()
        if self.prometheus is not None:
            self.prometheus.close()
        r = self.record
        if exc_type is None:
            r.status = "ok"
        elif issubclass(exc_type, KeyboardInterrupt):
            r.status, r.end_reason = "partial", "interrupted (KeyboardInterrupt)"
        else:
            r.status, r.end_reason = "failed", f"{exc_type.__name__}: {exc}"
        # saving never raises, so it cannot hide the user's own exception
        self.store_number = self.session.save().store_number
        if self._mlflow_sink is not None:  # never raises: a failure is one warning
            self.mlflow = self._mlflow_sink.finish(r)


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
    mlflow: str | bool | None = None,
    mlflow_html: Callable[[Record], bytes] | None = None,
) -> Monitor:
    """Watch the code in a ``with`` block; the record is ``m.record`` afterwards.

    ``store=False`` keeps the record out of the local store (a path picks another store);
    ``out`` also writes it to a file. ``gpus`` picks the GPUs (NVML indices; True: all the
    run can see; on a machine without an NVIDIA driver there are none and the record says
    why). ``prometheus="9100"`` or ``"0.0.0.0:9100"`` serves the live values for Prometheus
    while the block runs (127.0.0.1 unless a host is given), labelled ``job``/``worker``.
    The TensorFlow allocator is read once the block's code has started TensorFlow.
    ``mlflow="http://HOST:5000"`` (True: ``$MLFLOW_TRACKING_URI``) sends the samples to an
    MLflow run as system metrics while the block runs, then the findings, a fingerprint and
    the record; inside ``mlflow.start_run()``, or when the block starts one, that run is used
    (``m.mlflow.run_id``). A server that fails costs one warning, never the block.
    ``mlflow_html(record)`` renders the HTML report sent with it (``tfres.monitor`` passes
    :func:`tfres.report.html.render_html`; this layer sits below the reports).

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
        mlflow=mlflow,
        mlflow_html=mlflow_html,
    )
