"""Step attribution: how much of each training step waits for input, and how much computes.

Two ways to measure it, both giving the *input-wait fraction* the ``input_bound`` rule reads:

- :func:`timed` wraps the data iterable of a custom training loop and times every step:
  the time spent inside ``next()`` is input wait, the rest of the step is compute::

      for x, y in tfres.steps.timed(dataset, monitor=m):
          train_step(x, y)

  Each step becomes a ``record.steps`` entry ``{t_seconds, duration_seconds, epoch, step,
  input_wait_seconds}``.
- :func:`measure_input_wait` follows the tf.data performance guide: it times the input
  pipeline alone, the model on one cached batch, and the full run; the input-wait fraction is
  ``max(0, (full - compute_only) / full)``. It works for ``model.fit``-style training where
  ``next()`` is out of reach.

Under ``tfres run`` a program that never touches the parent's record still reports its steps:
:func:`timed` appends them, one JSON line each, to the file named by ``$TFRES_STEPS_FILE``
when that is set, and :func:`read_steps_file` turns the file back into ``record.steps``.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from tfres.diagnosis.facts import input_wait_fraction
from tfres.timeline import Phase
from tfres.watch.input_wait import InputWaitMeasurement, measure_input_wait

if TYPE_CHECKING:  # pragma: no cover
    from tfres.record import Record
    from tfres.watch.monitor import Monitor

__all__ = [
    "STEPS_FILE_ENV",
    "StepTimer",
    "timed",
    "read_steps_file",
    "read_events_file",
    "StepsFile",
    "InputWaitMeasurement",
    "measure_input_wait",
]

log = logging.getLogger("tfres")

#: The environment variable naming the JSON-lines file :func:`timed` appends steps to.
STEPS_FILE_ENV = "TFRES_STEPS_FILE"


class StepsFile:
    """Where a timed training sends its steps for the ``tfres run`` that watches it.

    ``tfres run`` sets ``$TFRES_STEPS_FILE``; each step is appended as one JSON line with
    its start on the monotonic and the wall clock, and :func:`read_steps_file` turns the
    lines back into ``record.steps``. With no path (``from_env=False``, or the variable
    unset) nothing is written. A write that fails is logged once and writing stops; the
    steps stay in memory.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        from_env: bool = True,
        flush_each: bool = True,
    ) -> None:
        if path is None and from_env:
            path = os.environ.get(STEPS_FILE_ENV) or None
        self.path: Path | None = Path(path) if path else None
        self._flush_each = flush_each
        self._fh: IO[str] | None = None

    def write(self, step: dict[str, Any], *, t_monotonic: float, t_wall: float) -> None:
        if self.path is None:
            return
        line = dict(step, t_monotonic=round(t_monotonic, 6), t_wall=round(t_wall, 6))
        try:
            if self._fh is None:
                self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
            self._fh.write(json.dumps(line) + "\n")
            if self._flush_each:
                self._fh.flush()
        except (OSError, ValueError) as err:
            log.warning(
                "tfres: cannot write steps to %s (%s); keeping them in memory only", self.path, err
            )
            self.path = None

    def flush(self) -> None:
        if self._fh is not None:
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError:
                pass
            self._fh = None


class StepTimer:
    """Times the steps of a training loop; one timer can serve several epochs.

    ``monitor`` (a :class:`tfres.watch.monitor.Monitor`) receives the steps in its record, on its
    timeline; ``steps_file`` (default ``$TFRES_STEPS_FILE``) receives them as JSON lines.
    ``timer.steps`` holds them in any case, with ``t_seconds`` from the monitor's start, or
    from the timer's creation when there is no monitor.

        timer = StepTimer()
        for epoch in range(3):
            for x, y in timer.timed(dataset, epoch=epoch):
                train_step(x, y)
        timer.input_wait_fraction  # e.g. 0.42
    """

    def __init__(
        self,
        *,
        monitor: Monitor | None = None,
        steps_file: str | os.PathLike[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self._monitor = monitor
        self._file = StepsFile(steps_file)
        self._t0 = clock()
        self._offset = monitor.sampler.elapsed() - self._t0 if monitor is not None else -self._t0
        self._next_step = 0
        #: every step timed so far, as ``record.steps`` entries
        self.steps: list[dict[str, Any]] = []

    def timed(self, iterable: Iterable[Any], *, epoch: int | None = None) -> Iterator[Any]:
        """Yield the items of ``iterable``, timing each step (see :func:`timed`)."""
        clock = self._clock
        iterator = iter(iterable)
        while True:
            asked = clock()
            try:
                item = next(iterator)
            except StopIteration:
                return
            got = clock()
            try:
                yield item
            finally:
                # the step ends when the loop asks for the next item, breaks or raises
                self._record(epoch, asked, got - asked, clock() - asked)

    def _record(self, epoch: int | None, start: float, wait: float, duration: float) -> None:
        step = {
            "t_seconds": round(start + self._offset, 6),
            "duration_seconds": round(duration, 9),
            "epoch": epoch,
            "step": self._next_step,
            "input_wait_seconds": round(wait, 9),
        }
        self._next_step += 1
        self.steps.append(step)
        if self._monitor is not None:
            self._monitor.record.steps.append(dict(step))
        self._file.write(step, t_monotonic=start, t_wall=time.time() - (self._clock() - start))

    @property
    def steps_file(self) -> Path | None:
        """The file steps are appended to, or None."""
        return self._file.path

    def close(self) -> None:
        """Close the steps file (also done when the timer is garbage collected)."""
        self._file.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    @property
    def input_wait_fraction(self) -> float | None:
        """Input wait over step time for the steps so far; None before the first step."""

        return input_wait_fraction(self.steps)


def timed(
    iterable: Iterable[Any],
    *,
    epoch: int | None = None,
    monitor: Monitor | None = None,
    steps_file: str | os.PathLike[str] | None = None,
    timer: StepTimer | None = None,
) -> Iterator[Any]:
    """Iterate ``iterable`` and time each step of the loop body: input wait versus compute.

    A step runs from the moment the loop asks for an item to the moment it asks for the
    next one (or leaves the loop); the part spent inside ``next()`` is ``input_wait_seconds``.
    With eager TensorFlow on a GPU, read a result inside the loop (``float(loss)``) so the
    step's work has finished when the next item is asked for. Steps go to ``monitor``'s
    record, to ``steps_file`` / ``$TFRES_STEPS_FILE``, and to ``timer.steps`` when a
    :class:`StepTimer` is given (pass one to read the fraction afterwards).

        with tfres.monitor(label="custom loop") as m:
            for x, y in tfres.steps.timed(dataset, monitor=m):
                loss = train_step(x, y)
    """
    t = timer or StepTimer(monitor=monitor, steps_file=steps_file)
    return t.timed(iterable, epoch=epoch)


def read_steps_file(
    path: str | os.PathLike[str],
    *,
    t0_monotonic: float | None = None,
    t0_wall: float | None = None,
) -> list[dict[str, Any]]:
    """``record.steps`` from a file :func:`timed` wrote under ``$TFRES_STEPS_FILE``.

    ``t_seconds`` is put on the reader's timeline: seconds after ``t0_monotonic`` (the same
    clock, ``time.monotonic``, is shared by all processes of a Linux host), else after
    ``t0_wall`` (``time.time()``), else as the writer stored it. A missing file gives ``[]``;
    a damaged line (a process killed mid-write) is skipped. The steps ``tfres run``'s hook
    found in a custom loop (``kind="loop"``) give way to the program's own timed steps; the
    Keras steps a ``ResourceMonitor`` wrote give way to the hook's (the same steps, with the
    profiler window's input wait).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    steps: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(raw, dict) or not isinstance(raw.get("duration_seconds"), (int, float)):
            continue
        step = {
            k: raw.get(k)
            for k in ("t_seconds", "duration_seconds", "epoch", "step", "input_wait_seconds")
        }
        for k in ("kind", "batches", "callback_seconds", "callback_written_bytes"):  # the hook's
            if raw.get(k) is not None:
                step[k] = raw[k]
        if t0_monotonic is not None and isinstance(raw.get("t_monotonic"), (int, float)):
            step["t_seconds"] = round(raw["t_monotonic"] - t0_monotonic, 6)
        elif t0_wall is not None and isinstance(raw.get("t_wall"), (int, float)):
            step["t_seconds"] = round(raw["t_wall"] - t0_wall, 6)
        steps.append(step)
    own = [s for s in steps if "kind" not in s]
    if own and any(s.get("kind") == "fit" for s in steps):
        # a ResourceMonitor and tfres run's hook timed the same Keras steps: the hook's carry
        # the profiler window's input wait
        steps = [s for s in steps if "kind" in s]
    elif own:  # the program times its own loop: it knows best
        steps = [s for s in steps if s.get("kind") != "loop"]
    return steps


def read_events_file(
    path: str | os.PathLike[str], record: Record, *, t0_monotonic: float | None
) -> None:
    """Put what ``tfres run``'s start-up hook wrote to ``$TFRES_EVENTS_FILE`` into ``record``.

    Phases go to ``record.phases`` (on the record's timeline: seconds after ``t0_monotonic``),
    notes to ``record.notes``, the input wait the profiler window measured onto the matching
    ``record.steps`` (same ``kind`` and ``step``) with what the profiler added to the step
    (``profiler_seconds``), the window's breakdown to
    ``record.extra["profile"]``, the step alone on a cached batch to
    ``record.extra["step_alone"]`` and the program's callbacks with a batch-end hook to
    ``record.extra["batch_callbacks"]``. A missing file or a damaged line is skipped.
    """

    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    by_step = {(s.get("kind"), s.get("step")): s for s in record.steps if s.get("kind")}
    for line in text.splitlines():
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(raw, dict):
            continue
        event = raw.get("event")
        if event == "phase" and t0_monotonic is not None:
            start, end = raw.get("start_monotonic"), raw.get("end_monotonic")
            if isinstance(start, (int, float)) and isinstance(end, (int, float)):
                record.phases.append(
                    Phase(
                        str(raw.get("name")),
                        round(start - t0_monotonic, 6),
                        round(end - t0_monotonic, 6),
                    )
                )
        elif event == "note" and raw.get("text") and raw["text"] not in record.notes:
            record.notes.append(str(raw["text"]))
        elif event == "input_wait":
            step = by_step.get((raw.get("kind"), raw.get("step")))
            if step is not None and isinstance(raw.get("input_wait_seconds"), (int, float)):
                step["input_wait_seconds"] = raw["input_wait_seconds"]
                if isinstance(raw.get("profiler_seconds"), (int, float)):
                    step["profiler_seconds"] = raw["profiler_seconds"]
        elif event == "profile":
            record.extra["profile"] = {k: v for k, v in raw.items() if k != "event"}
        elif event == "batch_callbacks" and isinstance(raw.get("names"), list):
            named = record.extra.setdefault("batch_callbacks", [])
            named.extend(str(n) for n in raw["names"] if str(n) not in named)
        elif event == "step_alone":
            alone = {k: v for k, v in raw.items() if k not in ("event", "start_monotonic")}
            if t0_monotonic is not None and isinstance(raw.get("start_monotonic"), (int, float)):
                alone["start_seconds"] = round(raw["start_monotonic"] - t0_monotonic, 6)
            record.extra["step_alone"] = alone
    record.phases.sort(key=lambda p: p.start_seconds)
