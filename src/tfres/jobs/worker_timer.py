"""The worker side of a multi-worker job: :class:`WorkerStepTimer`.

In synchronous training every worker waits for the slowest one at each all-reduce, so a
worker's full step time says nothing about which worker is slow. This timer splits each
step of a custom training loop into input wait, the worker's own compute and the
synchronisation, and reports the first two as the step (see :mod:`tfres.jobs.merge`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tfres.watch.steps import StepsFile

__all__ = ["WorkerStepTimer"]


class _Step:
    def __init__(self, start: float, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.start = start
        self.input_end: float | None = None
        self.compute_end: float | None = None

    def input_done(self) -> None:
        """The batch is here: the time so far was input wait."""
        self.input_end = self._clock()

    def compute_done(self) -> None:
        """This worker's own forward/backward is done; what follows is synchronisation."""
        self.compute_end = self._clock()


class WorkerStepTimer:
    """Times each step of a multi-worker custom training loop in three parts.

    Input wait (until ``s.input_done()``), own compute (until ``s.compute_done()``) and
    synchronisation (the rest: the all-reduce, which waits for the slowest worker). Each step
    becomes a ``record.steps`` entry whose ``duration_seconds`` is input plus own compute
    (the all-reduce left out) and ``sync_seconds`` the rest; under ``tfres run`` steps are
    appended to ``$TFRES_STEPS_FILE`` (see :mod:`tfres.watch.steps`) so they reach the worker's
    record. Make the compute part wait for its result (read a tensor) before
    ``compute_done()``.

        timer = WorkerStepTimer()
        for step in range(steps):
            with timer.step(epoch=0) as s:
                x, y = next(batches)
                s.input_done()
                grads = local_gradients(x, y)   # strategy.run(...), no collective inside
                s.compute_done()
                apply_gradients(grads)          # the all-reduce
    """

    def __init__(
        self,
        *,
        steps_file: str | os.PathLike[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self._file = StepsFile(steps_file)
        self._t0 = clock()
        self._next = 0
        #: every step so far, as ``record.steps`` entries (``t_seconds`` from the timer's start)
        self.steps: list[dict[str, Any]] = []

    @contextmanager
    def step(self, *, epoch: int | None = None) -> Iterator[_Step]:
        """Time one step: ``with timer.step() as s: ...; s.input_done(); ...; s.compute_done()``."""
        s = _Step(self._clock(), self._clock)
        try:
            yield s
        finally:
            end = self._clock()
            own_end = s.compute_end if s.compute_end is not None else end
            entry = {
                "t_seconds": round(s.start - self._t0, 6),
                "duration_seconds": round(own_end - s.start, 9),
                "epoch": epoch,
                "step": self._next,
                "input_wait_seconds": round((s.input_end or s.start) - s.start, 9),
                "sync_seconds": round(end - own_end, 9),
            }
            self._next += 1
            self.steps.append(entry)
            self._write(entry, s.start)

    def _write(self, entry: dict[str, Any], start: float) -> None:
        self._file.write(entry, t_monotonic=start, t_wall=time.time() - (self._clock() - start))

    @property
    def steps_file(self) -> Path | None:
        """The file steps are appended to (``$TFRES_STEPS_FILE`` under tfres run), or None."""
        return self._file.path

    def close(self) -> None:
        """Close the steps file."""
        self._file.close()
