"""The live half of :mod:`tfres.watch.mlflow`: a run's samples streamed to MLflow as it goes."""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

from tfres.record import Record
from tfres.timeline import Sample
from tfres.watch import mlflow as m
from tfres.watch.mlflow_context import SESSION_ENV, SESSION_TAG, close_session, open_session
from tfres.watch.mlflow_metrics import DEFAULT_MAX_POINTS, MetricPoint, MetricStream

__all__ = ["MlflowSink"]

log = logging.getLogger("tfres")

_MAX_HISTORY = 200_000  # points kept to copy into the script's own run
_MAX_QUEUE = 500_000  # points waiting for a slow server; beyond, the oldest are dropped
_MAX_FINISH_SECONDS = 120.0  # the most finish() waits for a backlog that is still moving
_BATCH = 1000  # MLflow's limit of metrics per log_batch


class MlflowSink:
    """Streams samples to an MLflow run and logs the finished record there.

    ``uri`` is the tracking URI (``http://HOST:PORT``, ``sqlite:///...``). ``run_id`` joins
    that run; else a run the watched script makes is joined once MLflow tags it, and until
    then tfres logs to a run of its own in ``experiment`` (default:
    ``$MLFLOW_EXPERIMENT_NAME``/``_ID``, else MLflow's default experiment). Nothing here
    raises into the work: failures end the streaming with one warning (``warn=False``: none,
    the caller says it), and :meth:`finish` says in ``MlflowResult.error`` what did not get
    there.

        sink = MlflowSink("http://127.0.0.1:5000", run_name="exp1")
        sink.start(record); sampler.add_listener(sink.on_sample); ...; sink.finish(record)
    """

    def __init__(
        self,
        uri: str,
        *,
        run_id: str | None = None,
        experiment: str | None = None,
        run_name: str | None = None,
        timeout_seconds: float = 10.0,
        flush_seconds: float = 2.0,
        max_points: int = DEFAULT_MAX_POINTS,
        in_process: bool = False,
        html: Callable[[Record], bytes] | None = None,
        warn: bool = True,
    ) -> None:
        self.uri = uri
        self.result = m.MlflowResult(uri, run_id=run_id)
        self.session = uuid.uuid4().hex
        self._experiment = experiment
        self._run_name = run_name
        self._own_run: str | None = None
        self._timeout = timeout_seconds
        self._flush_seconds = flush_seconds
        self._html = html
        self._in_process = in_process
        self._warn = warn
        self.stream = MetricStream(max_points=max_points)
        self._queue: deque[MetricPoint] = deque(maxlen=_MAX_QUEUE)
        self._history: list[MetricPoint] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._client: Any = None
        self._t0_wall: float | None = None
        self._progress = 0.0  # time.monotonic() of the last batch the server took
        self.dropped = 0

    # -- set-up ----------------------------------------------------------------------------
    def child_env(self) -> dict[str, str]:
        """Variables for a watched command: its MLflow runs get tagged with this session."""
        env = {SESSION_ENV: self.session}
        if "MLFLOW_TRACKING_URI" not in os.environ:
            env["MLFLOW_TRACKING_URI"] = self.uri
        return env

    def start(self, record: Record | None = None, *, wait: bool = False) -> bool:
        """Make (or find) the run from the sink's thread; samples queue up meanwhile.

        The server is probed and the run made off the caller's thread, so a slow server
        delays nothing. ``wait=True`` waits for that (at most ``timeout_seconds``) and says
        whether it worked; a failure is one warning and ``result.error``, never an exception.
        """
        if self._in_process:
            open_session(self.session)
            self._join_active_run()
        opened = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(record, opened), name="tfres-mlflow", daemon=True
        )
        self._thread.start()
        if wait:
            opened.wait(self._timeout + 5.0)
            return opened.is_set() and self.result.error is None
        return True

    # the tfres run Watcher protocol: the sink streams, finish() comes after the record is saved
    def on_start(self, pid: int) -> None:
        """The command started: make the run now (a command that cannot start makes none)."""
        del pid
        if self._thread is None:
            self.start()

    def on_stop(self, record: Record) -> None:
        del record

    def _join_active_run(self) -> None:
        """In a ``with tfres.monitor(mlflow=...)`` block inside ``mlflow.start_run()``: that run."""
        import sys

        mlflow = sys.modules.get("mlflow")  # not imported: no run of the caller's can be active
        if mlflow is None or self.result.run_id is not None:
            return
        active = mlflow.active_run()
        if active is not None and mlflow.get_tracking_uri().rstrip("/") == self.uri:
            self.result.run_id = active.info.run_id
            self.result.experiment_id = active.info.experiment_id
            self.result.joined = True

    def _run(self, record: Record | None, opened: threading.Event) -> None:
        _lower_priority()  # importing MLflow and sending take CPU: the work comes first
        try:
            m.check_server(self.uri, timeout_seconds=min(5.0, self._timeout))
            self._client = m.client(self.uri)
            m.with_deadline(lambda: self._open_run(record), self._timeout, "creating the run")
        except Exception as err:
            self._fail(err)
            return
        finally:
            opened.set()
        self._loop()

    def _open_run(self, record: Record | None) -> None:
        c = self._client
        if self.result.run_id is not None:
            run = c.get_run(self.result.run_id)
            self.result.experiment_id = run.info.experiment_id
            self.result.joined = True
            return
        exp = m.experiment_id(c, self._experiment)
        name = self._run_name or (record.label if record is not None else None)
        tags = {"tfres.record_id": record.id} if record is not None else {}
        run = c.create_run(exp, run_name=name, tags=tags)
        self._own_run = self.result.run_id = run.info.run_id
        self.result.experiment_id = exp

    # -- while the work goes on ------------------------------------------------------------
    def on_sample(self, sample: Sample) -> None:
        """Queue ``sample``'s metrics (a sampler listener: returns at once)."""
        if self.result.error is not None:
            return
        now = time.time()
        if self._t0_wall is None:
            self._t0_wall = now - sample.t_seconds
        points = self.stream.metrics(sample, wall_seconds=self._t0_wall + sample.t_seconds)
        with self._lock:
            if len(self._queue) + len(points) > _MAX_QUEUE:
                self.dropped += len(points)
            self._queue.extend(points)

    @property
    def queued_points(self) -> int:
        """Metric points taken from samples and not yet sent (the server is slow or gone)."""
        with self._lock:
            return len(self._queue)

    def _loop(self) -> None:
        """Send every ``flush_seconds``; once stopped, send what is left and end."""
        while True:
            stopped = self._stop.wait(self._flush_seconds)
            try:
                self._find_script_run()
                self._flush()
            except Exception as err:
                self._fail(err)
                return
            if stopped:
                return

    def _flush(self) -> None:
        with self._lock:
            points = list(self._queue)
            self._queue.clear()
        if not points or self.result.run_id is None:
            return
        for i in range(0, len(points), _BATCH):
            batch = points[i : i + _BATCH]
            m.log_points(self._client, self.result.run_id, batch)
            self._progress = time.monotonic()
            if len(self._history) < _MAX_HISTORY and self._own_run is not None:
                self._history.extend(batch[: _MAX_HISTORY - len(self._history)])

    def _find_script_run(self) -> None:
        """Move to the run the script made (tagged with our session), once it exists."""
        if self._own_run is None or self.result.joined:
            return
        c = self._client
        ids = [e.experiment_id for e in c.search_experiments(max_results=1000)]
        for i in range(0, len(ids), 100):
            runs = c.search_runs(
                ids[i : i + 100],
                filter_string=f"tags.`{SESSION_TAG}` = '{self.session}'",
                max_results=5,
            )
            theirs = [r for r in runs if r.info.run_id != self._own_run]
            if theirs:
                self._join(theirs[0])
                return

    def _join(self, run: Any) -> None:
        own = self._own_run
        self.result.run_id = run.info.run_id
        self.result.experiment_id = run.info.experiment_id
        self.result.joined = True
        if self._history:
            m.log_points(self._client, run.info.run_id, self._history)
        self._history = []
        if own is not None:
            self._client.delete_run(own)
        self._own_run = None
        log.info("tfres: joined the script's MLflow run %s", run.info.run_id)

    # -- after -----------------------------------------------------------------------------
    def finish(self, record: Record, *, status: str | None = None) -> m.MlflowResult:
        """Send what is left, the tags, params and artifacts; end tfres's own run.

        Waits at most ``timeout_seconds`` for the server (three times that for the
        artifacts); ``result.error`` says what did not get there. Never raises.
        """
        if self._in_process:
            close_session(self.session)
        self._stop.set()
        self._wait_for_thread()
        if self._thread is not None and self._thread.is_alive():
            self._fail(
                m.MlflowError(f"the MLflow server did not answer within {self._timeout:g} s")
            )
        if self.result.error is None and self._client is not None:
            try:
                m.with_deadline(
                    lambda: self._send_rest(record, status), 3 * self._timeout, "sending the record"
                )
            except Exception as err:
                self._fail(err)
        record.extra["mlflow"] = self.result.to_dict()
        return self.result

    def _wait_for_thread(self) -> None:
        """Wait while the thread sends (a backlog may take many batches), up to
        ``timeout_seconds`` without progress and :data:`_MAX_FINISH_SECONDS` in all."""
        if self._thread is None:
            return
        start = time.monotonic()
        self._progress = max(self._progress, start)
        while self._thread.is_alive():
            now = time.monotonic()
            if now - self._progress > self._timeout or now - start > _MAX_FINISH_SECONDS:
                return
            self._thread.join(0.2)

    def _send_rest(self, record: Record, status: str | None) -> None:
        html = None
        if self._html is not None:
            try:
                html = self._html(record)
            except Exception as err:  # the report is a bonus: the record goes anyway
                log.warning("tfres: the HTML report for MLflow failed: %s", err)
        run_id = self.result.run_id
        assert run_id is not None
        m.log_record(self._client, run_id, record, html=html)
        if self._own_run is not None:
            status = status or _mlflow_status(record.status)
            m.terminate(self._client, run_id, status, to_stderr=not self._in_process)

    def _fail(self, err: BaseException) -> None:
        if self.result.error is not None:
            return
        text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        self.result.error = text[:300]
        if not self._warn:  # the caller says it in its own line (tfres run)
            log.info("tfres: MLflow: %s", text)
            return
        log.warning("tfres: MLflow: %s; the record is kept locally (tfres push sends it)", text)


def _lower_priority() -> None:
    """Run this thread at nice +10 (Linux: threads have their own nice value); else as is."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (AttributeError, OSError):
        pass


def _mlflow_status(status: str) -> str:
    return {"ok": "FINISHED", "failed": "FAILED", "partial": "KILLED"}.get(status, "FINISHED")
