"""``tfres.callbacks.ResourceMonitor``: a Keras callback that puts training on the timeline."""

from __future__ import annotations

import os
import time
from typing import Any

import keras

from tfres.backends.tf_memory import TfMemoryReader
from tfres.devices.inject import _tfres_alone, _tfres_fitplan, _tfres_quiet, _tfres_window
from tfres.devices.inject import _tfres_xplane as xplane
from tfres.record import Record
from tfres.sampler.sampler import DEFAULT_INTERVAL_SECONDS
from tfres.session import RecordSession
from tfres.watch.monitor import Monitor
from tfres.watch.steps import StepsFile

__all__ = ["ResourceMonitor"]

#: steps kept at full detail; past that, every other one is dropped and the stride doubles
DEFAULT_MAX_STEPS = 100_000
#: the training steps (counted from 0 over the whole fit) whose input wait is measured: the
#: same profiler window, and the same reading of it, as ``tfres run``'s start-up hook
DEFAULT_INPUT_WAIT_WINDOW = (5, 24)


class ResourceMonitor(keras.callbacks.Callback):
    """Record CPU/GPU/memory while a model trains, with its epochs and steps on the timeline.

    Each epoch is a phase (``"epoch 1"``, ...) and a mark; each training batch becomes a
    ``record.steps`` entry ``{"t_seconds", "duration_seconds", "epoch", "step"}`` (a step
    lasts from its batch's start to the next one's; epoch and step count from 0, as Keras
    counts them). At each epoch's end the TensorFlow allocator's
    peak of that epoch goes to ``record.extra["epochs"]`` with the epoch's logs (no peaks
    where TensorFlow keeps no statistics: the dict is empty).

    - By default the callback samples on its own (a :func:`tfres.watch.monitor` from train begin to
      train end, saved to the store; ``store``/``out`` as there); ``cb.record`` is the record.
    - ``monitor=m`` attaches it to a running ``tfres.monitor()`` instead: marks, phases and
      steps go into ``m.record``, and ``m`` saves it.
    - ``sample=False`` only times the steps (no sampler thread, no measurable slowdown: see
      docs/benchmarks/overhead.md); ``cb.record`` still holds steps and epochs, and it is
      saved like any record unless ``store=False``.
    - Under ``tfres run``, where ``$TFRES_STEPS_FILE`` is set, steps also go to that file so
      the parent's record gets them.
    - Runs of more than ``max_steps`` steps keep every 2nd, then every 4th, ... step, so the
      record stays bounded; ``record.extra["steps_stride"]`` says how many were skipped.
    - Input wait is measured as ``tfres run`` measures it (docs/instrumentation.md): a
      TensorFlow profiler window over the steps ``input_wait_window`` (default 5-24, ending
      after 2 s once it has traced 8 steps, and fitted to a short ``fit``, as ``tfres run``'s
      is; None: off)
      and the time each step waits for tf.data (blocked in ``IteratorGetNext``, or for the
      GIL while the pipeline's Python runs, or slowed by the pipeline taking its cores: the
      step's call against the same call on a cached batch, timed at train end with every
      variable put back), less what the profiler itself added to the window's steps (their
      median above the unprofiled steps after them in the epoch); those steps get
      ``input_wait_seconds`` and ``profiler_seconds`` at train end. Under ``tfres run`` the
      start-up hook does it.

        cb = tfres.callbacks.ResourceMonitor(label="mnist")
        model.fit(x, y, epochs=3, callbacks=[cb])
    """

    def __init__(
        self,
        label: str | None = None,
        *,
        monitor: Monitor | None = None,
        sample: bool = True,
        interval: float = DEFAULT_INTERVAL_SECONDS,
        store: bool | str | os.PathLike[str] = True,
        out: str | os.PathLike[str] | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        input_wait_window: tuple[int, int] | None = DEFAULT_INPUT_WAIT_WINDOW,
    ) -> None:
        super().__init__()
        if max_steps < 2:
            raise ValueError(f"max_steps must be at least 2 (got {max_steps!r})")
        self.label = label
        self.sample = sample
        self.interval = interval
        self._store = store
        self._out = out
        self.max_steps = max_steps
        self._attached = monitor
        self._monitor: Monitor | None = None
        self._own_record: Record | None = None
        self._own_session: RecordSession | None = None
        self._t0 = 0.0
        self._epoch = 0
        self._epoch_start = 0.0
        self._open_step: tuple[int, float] | None = None
        self._offset = 0.0
        self._monotonic_offset = 0.0
        self._wall_offset = 0.0
        self._stride = 1
        self._seen = 0
        self._epoch_batches = 0
        self._steps_file = StepsFile(from_env=False)
        self._tf_memory: Any = None
        if input_wait_window is not None and not 0 <= input_wait_window[0] <= input_wait_window[1]:
            raise ValueError(
                f"input_wait_window must be (first, last) with 0 <= first <= last "
                f"(got {input_wait_window!r})"
            )
        self.input_wait_window = input_wait_window
        self._window = _ProfileWindow(input_wait_window)
        #: the steps of the training so far (also in the record)
        self.steps: list[dict[str, Any]] = []
        #: one dict per epoch: start/end seconds, steps, logs, TensorFlow allocator peaks
        self.epochs: list[dict[str, Any]] = []

    # -- where things go -------------------------------------------------------------------
    @property
    def record(self) -> Record | None:
        """The record this callback fills (the attached monitor's, or its own)."""
        if self._attached is not None:
            return self._attached.record
        if self._monitor is not None:
            return self._monitor.record
        return self._own_record

    def _elapsed(self) -> float:
        monitor = self._attached or self._monitor
        if monitor is not None:
            return monitor.elapsed()
        return time.perf_counter() - self._t0

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        self.steps = []
        self.epochs = []
        self._stride, self._seen = 1, 0
        self._t0 = time.perf_counter()
        if self._attached is None:
            if self.sample:
                self._monitor = Monitor(
                    self.label, interval=self.interval, store=self._store, out=self._out
                )
                self._monitor.__enter__()
            else:
                self._own_session = RecordSession(
                    Record(kind="monitor", label=self.label), store=self._store, out=self._out
                )
                self._own_session.start()
                self._own_record = self._own_session.record
        self._open_step = None
        now = time.perf_counter()
        # step times are perf_counter readings, put on the timeline and the shared clocks
        self._offset = self._elapsed() - now
        self._monotonic_offset = time.monotonic() - now
        self._wall_offset = time.time() - now

        self._tf_memory = TfMemoryReader()
        # under tfres run, steps go to the parent through $TFRES_STEPS_FILE (when attached to
        # a monitor, that monitor's record gets them instead)
        self._steps_file = StepsFile(from_env=self._attached is None, flush_each=False)
        if self._window.window is not None:  # the default window fitted to this fit's length
            _tfres_fitplan.fit_window(self._window.window, self._seen, self.params, self.model)

    # -- epochs ----------------------------------------------------------------------------
    def on_epoch_begin(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        self._epoch = epoch
        self._epoch_batches = 0
        self._tf_memory.reset_peaks()
        self._epoch_start = self._elapsed()
        monitor = self._attached or self._monitor
        if monitor is not None:
            monitor.mark(f"epoch {epoch + 1}")

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        if self._open_step is not None:
            self._close_step(time.perf_counter())
        end = self._elapsed()
        monitor = self._attached or self._monitor
        if monitor is not None:
            monitor.add_phase(f"epoch {epoch + 1}", self._epoch_start, end)
        elif self._own_record is not None:
            from tfres.timeline import Phase

            self._own_record.phases.append(
                Phase(f"epoch {epoch + 1}", round(self._epoch_start, 6), round(end, 6))
            )
        memory = self._tf_memory.read() or {}
        self.epochs.append(
            {
                "epoch": epoch,
                "start_seconds": round(self._epoch_start, 6),
                "end_seconds": round(end, 6),
                "steps": self._epoch_batches,
                "tf_peak_bytes": {dev: m["peak_bytes"] for dev, m in memory.items()},
                "logs": {k: _number(v) for k, v in (logs or {}).items()},
            }
        )
        self._steps_file.flush()

    # -- steps -----------------------------------------------------------------------------
    # A step runs from one on_train_batch_begin to the next (the epoch's last one to the
    # epoch's end). Not overriding on_train_batch_end matters: Keras dispatches batch-end
    # callbacks on a thread only when none overrides them, and otherwise turns every step's
    # logs into Python numbers on the training thread, which waits for the device.
    def on_train_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        now = time.perf_counter()
        if self._open_step is not None:
            self._close_step(now)
        self._window.begin(self._seen, self.model)
        self._open_step = (batch, now)

    def _close_step(self, end: float) -> None:
        assert self._open_step is not None
        batch, start = self._open_step
        self._open_step = None
        self._window.end_step()
        index = self._seen
        self._seen += 1
        self._epoch_batches += 1
        self._window.timed(index, self._epoch, end - start)
        if self._seen % self._stride:
            return
        step = {
            "t_seconds": round(start + self._offset, 6),
            "duration_seconds": round(end - start, 9),
            "epoch": self._epoch,
            "step": batch,
        }
        self.steps.append(step)
        self._window.keep(index, step)
        self._steps_file.write(
            step,
            t_monotonic=start + self._monotonic_offset,
            t_wall=start + self._wall_offset,
        )
        if len(self.steps) >= self.max_steps:
            del self.steps[1::2]
            self._stride *= 2

    # -- the end ---------------------------------------------------------------------------
    def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
        if self._open_step is not None:
            self._close_step(time.perf_counter())
        notes = self._window.finish()
        self._steps_file.close()
        record = self.record
        if record is not None:
            record.steps.extend(self.steps)
            record.extra.setdefault("epochs", []).extend(self.epochs)
            if self._stride > 1:
                record.extra["steps_stride"] = self._stride
            record.notes.extend(notes)
            if self._window.alone.times:
                record.extra["step_alone_seconds"] = round(
                    xplane.step_alone_seconds(self._window.alone.times), 9
                )
                # whether the program's other threads were idle before its calls
                quiet = _tfres_quiet.quiet_fields(self._window.alone.quiet, record.notes.append)
                record.extra.update({f"step_alone_{k}": v for k, v in quiet.items()})
        if self._monitor is not None:
            self._monitor.__exit__(None, None, None)
        elif self._own_session is not None:
            self._own_session.record.status = "ok"
            self._own_session.save()  # never raises: a record must not stop training


class _ProfileWindow:
    """The profiler window of :class:`ResourceMonitor`: the start-up hook's
    :class:`~tfres.devices.inject._tfres_window.ProfilerWindow`, the steps it covers, and its
    reading at the end (see docs/instrumentation.md)."""

    def __init__(self, window: tuple[int, int] | None) -> None:
        self.notes: list[str] = []
        self.alone = _tfres_alone.StepAlone(self.notes.append)
        # under tfres run the start-up hook holds the (single) profiler session
        self.window = (
            None
            if window is None or os.environ.get("TFRES_INSTRUMENT") == "1"
            else _tfres_window.ProfilerWindow(
                *window,
                xplane.CALL_MARKER,
                self.alone.arm,
                **(
                    _tfres_window.DEFAULT_CAPS if tuple(window) == DEFAULT_INPUT_WAIT_WINDOW else {}
                ),
            )
        )
        self.logdir: str | None = None
        self.steps: dict[int, dict[str, Any]] = {}
        self.started: float | None = None  # the first step's start: 1% of the time since
        # is the budget of the step alone
        self._unmark_items: Any = None  # undoes the PyDataset workers' batch marker

    def begin(self, index: int, model: Any) -> None:
        # past the window too: it reads the unprofiled calls after it, step by step, as the
        # hook's does (the pipeline's CPU beside a call, the time outside it)
        if self.window is None:
            return
        if self.started is None:
            self.started = time.perf_counter()
            self._unmark_items = _tfres_window.mark_items(xplane.ITEM_MARKER)
        try:
            self.window.begin(index, model, self._new_logdir)
        except Exception:  # another profiler session runs: the user's own
            return

    def _new_logdir(self) -> str:
        import tempfile

        self.logdir = tempfile.mkdtemp(prefix="tfres-input-wait-")
        return self.logdir

    def end_step(self) -> None:
        if self.window is not None:
            self.window.end_step()

    def timed(self, index: int, epoch: int, duration_seconds: float) -> None:
        if self.window is not None:
            self.window.timed(index, epoch, duration_seconds)

    def keep(self, index: int, step: dict[str, Any]) -> None:
        if self.window is not None and self.window.state == "on":
            self.steps[index] = step

    def finish(self) -> list[str]:
        """Time the step alone, read the trace into the kept steps; notes on what could not be.

        Called from ``on_train_end``, inside ``fit``: Keras's iterator is still open, so a
        pipeline with room left in its prefetch buffer may still run beside the first calls
        of the step alone, and their mean counts them: there the step alone may read slow,
        and the input wait low, by what the pipeline took from those calls."""
        import shutil

        if self.window is not None:
            self.window.stop()
            self.window.release()
            error = self.window.stop_error()
            if error is not None:
                self.notes.append(f"the profiler did not stop cleanly: {error}")
        if self._unmark_items is not None:
            self._unmark_items()
            self._unmark_items = None
        if self.logdir is None or self.window is None:  # no trace: the window never opened
            return self.notes
        try:
            from tfres.watch.profile import read_profile

            spent = time.perf_counter() - self.started if self.started else 0.0
            try:
                alone = self.alone.measure(xplane.CALL_MARKER, 0.01 * spent) or []
            except Exception as err:  # read the trace all the same
                alone = []
                self.notes.append(f"the step alone (on a cached batch) was not timed: {err}")
            steps, _ = xplane.window_input(
                read_profile(self.logdir)["steps"],
                self.window,
                alone,
                self.alone.plain_times,
                self.alone.plain_cpu_seconds,
                self.alone.plain_threads,
            )
            for s in steps:
                step = self.steps.get(s["step"])
                if step is not None:
                    step["input_wait_seconds"] = round(s["input_seconds"], 9)
                    if "profiler_seconds" in s:
                        step["profiler_seconds"] = round(s["profiler_seconds"], 9)
        except Exception as err:  # never fail the training for it
            self.notes.append(
                f"input wait not measured: the profiler trace could not be read ({err})"
            )
        finally:
            shutil.rmtree(self.logdir, ignore_errors=True)
            self.logdir = None
        return self.notes


def _number(value: Any) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)
