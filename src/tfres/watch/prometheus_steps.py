"""Step-time and input-wait histograms for the Prometheus exporter, fed as steps arrive.

Under ``tfres run`` the command's step timers append one JSON line a step to
``$TFRES_STEPS_FILE`` (:mod:`tfres.watch.steps`); under ``tfres.monitor`` they append to
``record.steps``. :class:`StepHistograms` reads what is new at each scrape, from where it
stopped (never the whole file again), and serves

- ``tfres_step_duration_seconds``: a step's wall time (``duration_seconds``);
- ``tfres_step_input_wait_seconds``: the part of it spent waiting for input.

Both are Prometheus histograms (``_bucket``/``_sum``/``_count``), so a recording rule can
take each worker's mean (``rate(_sum) / rate(_count)``) or quantiles
(``histogram_quantile``) over any window; see docs/prometheus.md. Nothing is served
before the first step.
"""

from __future__ import annotations

import bisect
import json
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from tfres.watch.jsonl import JsonLinesTail

__all__ = ["STEP_BUCKETS_SECONDS", "StepHistograms"]

log = logging.getLogger("tfres")

#: upper bounds (seconds), about 1.5x apart from 1 ms to a minute: fine enough that a worker
#: 20% slower than the others moves to another bucket
STEP_BUCKETS_SECONDS: tuple[float, ...] = (
    0.001, 0.0015, 0.0025, 0.004, 0.006, 0.01, 0.015, 0.025, 0.04, 0.06,
    0.1, 0.15, 0.25, 0.4, 0.6, 1.0, 1.5, 2.5, 4.0, 6.0, 10.0, 15.0, 30.0, 60.0,
)  # fmt: skip

_HISTOGRAMS = (
    ("tfres_step_duration_seconds", "Wall time of a training step.", "duration_seconds"),
    (
        "tfres_step_input_wait_seconds",
        "Time a training step waited for its input (inside next() on the data).",
        "input_wait_seconds",
    ),
)


class _Histogram:
    def __init__(self) -> None:
        self.counts = [0] * (len(STEP_BUCKETS_SECONDS) + 1)  # the last: above every bound
        self.total = 0.0
        self.n = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(STEP_BUCKETS_SECONDS, value)] += 1
        self.total += value
        self.n += 1

    def buckets(self) -> list[tuple[str, float]]:
        out, running = [], 0
        for bound, count in zip(STEP_BUCKETS_SECONDS, self.counts, strict=False):
            running += count
            out.append((_bound_text(bound), float(running)))
        out.append(("+Inf", float(self.n)))
        return out


def _bound_text(bound: float) -> str:
    return repr(float(bound))


class StepHistograms:
    """Histograms of the steps in a steps file (:meth:`follow_file`) or a list (:meth:`follow`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hist = {key: _Histogram() for _, _, key in _HISTOGRAMS}
        self._tail: JsonLinesTail | None = None
        self._steps: Sequence[dict[str, Any]] | None = None
        self._seen = 0

    def follow_file(self, path: str | os.PathLike[str]) -> None:
        """Read the steps appended to ``path`` (a ``$TFRES_STEPS_FILE``) from now on."""
        if self._tail is not None:
            self._tail.close()
        self._tail = JsonLinesTail(path)

    def follow(self, steps: Sequence[dict[str, Any]]) -> None:
        """Read the steps appended to ``steps`` (a monitor's ``record.steps``)."""
        self._steps, self._seen = steps, 0

    def observe(self, step: dict[str, Any]) -> None:
        """Count one step (``duration_seconds``, ``input_wait_seconds``; others ignored)."""
        for key, hist in self._hist.items():
            value = step.get(key)
            if isinstance(value, (int, float)) and value >= 0:
                hist.observe(float(value))

    def _read_new(self) -> None:
        if self._steps is not None:
            new = list(self._steps[self._seen :])
            self._seen += len(new)
            for step in new:
                self.observe(step)
        if self._tail is not None:
            for step in self._new_lines():
                self.observe(step)

    def _new_lines(self) -> Iterator[dict[str, Any]]:
        assert self._tail is not None
        try:
            lines = self._tail.new_lines()
        except FileNotFoundError:
            return
        except OSError as err:
            log.warning("tfres: cannot read the steps file %s: %s", self._tail.path, err)
            self._tail = None
            return
        for line in lines:
            try:
                step = json.loads(line)
            except ValueError:
                continue  # a damaged line (a process killed mid-write)
            if isinstance(step, dict):
                yield step

    def families(self, label_names: list[str], label_values: list[str]) -> Iterator[Any]:
        """The histograms as prometheus-client metric families (none before the first step)."""
        from prometheus_client.core import HistogramMetricFamily

        with self._lock:
            self._read_new()
            for name, help_text, key in _HISTOGRAMS:
                hist = self._hist[key]
                if hist.n == 0:
                    continue
                family = HistogramMetricFamily(name, help_text, labels=label_names)
                family.add_metric(label_values, hist.buckets(), hist.total)
                yield family
