"""Host-memory budgets: TensorFlow has no host-memory cap, so tfres watches and enforces one.

    budget = tfres.limit_memory("10%")          # or "2GiB", or a number of bytes
    for step, batch in enumerate(dataset):
        train_step(batch)
        if budget.exceeded:                      # the soft threshold (90%) was crossed
            save_checkpoint(); break

A watchdog thread reads the memory of this process and its children every ``interval``
seconds (50 ms by default) and acts BEFORE the budget, on the level and on the trend
(the growth rate over the last readings, ``rate_bytes_per_second``):

- **soft** (``soft_ratio`` of the budget, 90%, or earlier when the trend would reach the
  budget within ``lead_seconds``, two readings): it logs a warning, sets ``budget.exceeded``
  and calls the functions given to :meth:`MemoryBudget.on_exceeded`; the Keras callback
  :class:`tfres.callbacks.MemoryBudget` ends training at the next batch and saves a checkpoint.
- **the stop** (with ``hard=True``), when the next reading would be at or past the budget:
  it raises :class:`~tfres.errors.BudgetExceededError` in the main thread (like Ctrl-C's
  ``KeyboardInterrupt``, between two Python bytecodes, so a long C call finishes first).
  Watching another process (``pid=``), it stops that tree with the kill ladder
  (:class:`tfres.backends.signals.StopLadder`): SIGTERM, then SIGKILL after ``grace_seconds``,
  or at once if the tree still grows into the budget after the SIGTERM.

What is measured: the RSS of the tree, read from ``/proc/PID/statm`` (about 10 us per
process). PSS, which counts pages shared between processes once, costs 2-5 ms per read of a
1 GB TensorFlow process (``smaps_rollup``; see docs/benchmarks/control.md), so it is read only
for trees of several processes once their RSS sum passes the soft threshold (fork-based data
workers share the parent's arrays, which RSS counts once per worker), at most every 0.5 s.

``tfres run --memory-budget 10% -- python train.py`` uses
:class:`tfres.budget.command.BudgetWatcher`, which also puts the command in a cgroup with
a hard limit where the kernel allows it (see
:mod:`tfres.backends.memlimit`). There is never a need for the kernel's OOM killer.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from tfres.backends.memlimit import MemoryReading, TreeMemory, memory_ceiling
from tfres.backends.signals import StopLadder, raise_in_main_thread
from tfres.backends.tf_config import tensorflow
from tfres.errors import BudgetExceededError
from tfres.units import format_bytes, parse_size_or_percent

__all__ = [
    "MemoryBudget",
    "limit_memory",
    "parse_budget",
    "budget_options",
    "apply_budget",
    "DEFAULT_SOFT_RATIO",
    "DEFAULT_INTERVAL_SECONDS",
]

log = logging.getLogger("tfres")

DEFAULT_SOFT_RATIO = 0.9
#: 20 Hz: a training step that allocates 1 GB/s overshoots by at most ~50 MB between reads.
DEFAULT_INTERVAL_SECONDS = 0.05
#: PSS is re-read at most this often (it costs milliseconds); RSS fills the gaps.
PSS_EVERY_SECONDS = 0.5
#: the growth rate is taken over this many seconds of readings
RATE_WINDOW_SECONDS = 0.3


def parse_budget(budget: str | int | float, *, ceiling: tuple[int, str] | None = None) -> int:
    """``"10%"``, ``"2GiB"`` or bytes -> bytes; a percentage is of the memory this tree may use.

    That is the RAM, or the cgroup memory limit when it is lower (a container). A budget of
    zero, negative, unparsable or above that memory raises ``ValueError`` in one line.

    >>> parse_budget("1GiB", ceiling=(8 * 2**30, "RAM"))
    1073741824
    """
    total, what = ceiling or memory_ceiling()
    if isinstance(budget, (int, float)) and not isinstance(budget, bool) and budget < 0:
        raise ValueError(f"memory budget must be above 0 (got {budget!r})")
    try:
        n = parse_size_or_percent(budget, total_bytes=total)
    except ValueError as err:
        raise ValueError(f"memory budget: {err}, or a percentage like '10%'") from None
    if n <= 0:
        raise ValueError(f"memory budget must be above 0 (got {budget!r})")
    if n > total:
        raise ValueError(
            f"memory budget {budget!r} ({format_bytes(n)}) is above the {format_bytes(total)} of "
            f"{what}; pick a smaller size or a percentage like '80%'"
        )
    return n


class MemoryBudget:
    """A watchdog on the memory of a process tree; made and started by :func:`limit_memory`.

    ``exceeded`` turns True (and stays so until :meth:`reset`) when the soft threshold is
    crossed; ``over`` when the budget itself is. ``peak_bytes`` is the largest reading;
    ``used_bytes`` the latest (None before the first). Figures are RSS, or PSS where noted in
    ``measure``. ``warn=False`` logs the crossings at debug level instead of as warnings.
    ``lead_seconds`` is how far ahead the trend is read (default: two readings). Watching
    another process, ``ladder`` stops it (default: a :class:`StopLadder` on its tree).
    ``clock`` and ``reader`` are injectable for tests.
    """

    def __init__(
        self,
        budget_bytes: int,
        *,
        soft_ratio: float = DEFAULT_SOFT_RATIO,
        interval: float = DEFAULT_INTERVAL_SECONDS,
        pid: int | None = None,
        hard: bool = True,
        grace_seconds: float = 5.0,
        warn: bool = True,
        lead_seconds: float | None = None,
        ladder: StopLadder | None = None,
        clock: Callable[[], float] = time.monotonic,
        reader: Callable[[float], MemoryReading] | None = None,
    ) -> None:
        if isinstance(budget_bytes, bool) or not isinstance(budget_bytes, int) or budget_bytes <= 0:
            raise ValueError(
                f"budget_bytes must be a number of bytes above 0 (got {budget_bytes!r})"
            )
        if not 0 < soft_ratio <= 1:
            raise ValueError(f"soft_ratio must be above 0 and at most 1 (got {soft_ratio!r})")
        if not interval > 0:
            raise ValueError(f"interval must be > 0 seconds (got {interval!r})")
        self.budget_bytes = budget_bytes
        self.soft_ratio = float(soft_ratio)
        self.soft_bytes = int(budget_bytes * soft_ratio)
        self.interval = float(interval)
        self.pid = os.getpid() if pid is None else int(pid)
        self.in_process = self.pid == os.getpid()
        self.hard = hard
        self.grace_seconds = grace_seconds
        self.lead_seconds = 2 * self.interval if lead_seconds is None else float(lead_seconds)
        self.ladder = ladder
        if ladder is None and not self.in_process:
            self.ladder = StopLadder(
                self.pid, grace_seconds=grace_seconds, group=False, clock=clock
            )
        self._log = log.warning if warn else log.debug
        self._clock = clock
        self._tree = TreeMemory(self.pid) if reader is None else None
        self._read = reader or self._tree.read  # type: ignore[union-attr]
        self.mechanisms: list[str] = ["watchdog"]
        self.measure = "rss"
        self.used_bytes: int | None = None
        self.peak_bytes: int | None = None
        self.exceeded = False
        self.over = False
        self.triggered_at_seconds: float | None = None
        self.over_at_seconds: float | None = None
        self.reason: str | None = None
        self._pss_at: float | None = None
        self._shared_bytes = 0
        self._recent: deque[tuple[float, int]] = deque()
        #: growth of the tree's memory over the last readings (None before two readings)
        self.rate_bytes_per_second: float | None = None
        self._callbacks: list[Callable[[MemoryBudget], None]] = []
        self._extra_check: Callable[[], str | None] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0: float | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> MemoryBudget:
        if self._thread is not None:
            raise RuntimeError("this MemoryBudget was already started; make a new one")
        self._t0 = self._clock()
        self.sample_once()
        self._thread = threading.Thread(target=self._loop, name="tfres-budget", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching (the figures stay readable)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def __enter__(self) -> MemoryBudget:
        return self if self._thread is not None else self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.sample_once()
            except Exception as err:  # the watchdog must never kill the run it guards
                log.warning("tfres memory budget: reading failed: %s", err)

    # -- what users call -----------------------------------------------------------------
    def on_exceeded(self, fn: Callable[[MemoryBudget], None]) -> None:
        """Call ``fn(budget)`` (from the watchdog thread) when the soft threshold is crossed."""
        self._callbacks.append(fn)

    def check(self) -> None:
        """Raise :class:`BudgetExceededError` with the figures if the soft threshold was crossed."""
        if self.exceeded:
            raise self.error()

    def reset(self) -> None:
        """Clear ``exceeded``/``over`` (e.g. after freeing memory) so they can trigger again."""
        self.exceeded = self.over = False

    def error(self, message: str | None = None) -> BudgetExceededError:
        used = self.peak_bytes or 0
        text = message or (
            f"memory budget exceeded: the process tree used {format_bytes(used)} ({self.measure}) "
            f"of its {format_bytes(self.budget_bytes)} budget"
        )
        return BudgetExceededError(text, used_bytes=used, budget_bytes=self.budget_bytes)

    def elapsed(self) -> float:
        return 0.0 if self._t0 is None else self._clock() - self._t0

    # -- one reading -----------------------------------------------------------------------
    def _used(self, now: float, reading: MemoryReading) -> int:
        """RSS; for trees of several processes near the budget, PSS (see the module doc)."""
        rss = reading.rss_bytes
        if reading.processes < 2 or rss < self.soft_bytes or self._tree is None:
            return rss
        if self._pss_at is None or now - self._pss_at >= PSS_EVERY_SECONDS:
            pss = self._tree.pss_bytes()
            self._pss_at = now
            if pss is not None:
                self._shared_bytes = max(0, rss - pss)
                self.measure = "pss"
        return rss - self._shared_bytes

    def _trend(self, now: float, used: int) -> float:
        """Record a reading; the growth rate in bytes/s over :data:`RATE_WINDOW_SECONDS`."""
        self._recent.append((now, used))
        while len(self._recent) > 2 and now - self._recent[0][0] > RATE_WINDOW_SECONDS:
            self._recent.popleft()
        t0, u0 = self._recent[0]
        rate = (used - u0) / (now - t0) if now > t0 else 0.0
        self.rate_bytes_per_second = rate if len(self._recent) > 1 else None
        return max(0.0, rate)

    def sample_once(self) -> int:
        """Read the tree once and act on the thresholds; returns the bytes counted."""
        now = self._clock()
        if self._t0 is None:
            self._t0 = now
        used = self._used(now, self._read(now))
        self.used_bytes = used
        self.peak_bytes = used if self.peak_bytes is None else max(self.peak_bytes, used)
        rate = self._trend(now, used)
        t = round(now - self._t0, 3)
        soon = used + rate * self.lead_seconds >= self.budget_bytes
        if (used >= self.soft_bytes or soon) and not self.exceeded:
            self._soft(t, used, trend=used < self.soft_bytes)
        extra = self._extra_check() if self._extra_check is not None else None
        # "the next reading would be past it", with half a reading more for a late thread
        at_budget = used + rate * 1.5 * self.interval >= self.budget_bytes
        if (at_budget or extra) and not self.over:
            self.over = True
            self.over_at_seconds = t
            self.reason = extra or self._over_reason(used, rate, t)
            self._log("tfres: %s", self.reason)
            if self.hard:
                self._enforce(now, extra=bool(extra))
        elif self.over and self.hard and self.ladder is not None and (at_budget or extra):
            self._escalate(now, extra=bool(extra))
        if self.ladder is not None and self.hard and self.over:
            self.ladder.poll()
        return used

    def _over_reason(self, used: int, rate: float, t: float) -> str:
        budget = format_bytes(self.budget_bytes)
        figures = f"the process tree used {format_bytes(used)} ({self.measure}) at {t:.1f} s"
        if used >= self.budget_bytes:
            return f"memory budget {budget} exceeded: {figures}"
        return (
            f"memory budget {budget} about to be exceeded: {figures}, growing "
            f"{format_bytes(int(rate))}/s; stopped before it"
        )

    def _soft(self, t: float, used: int, *, trend: bool) -> None:
        self.exceeded = True
        self.triggered_at_seconds = t
        why = "its trend would reach" if trend else f"past {round(self.soft_ratio * 100)}% of"
        self._log(
            "tfres: memory at %s, %s the %s budget: asking to stop",
            format_bytes(used),
            why,
            format_bytes(self.budget_bytes),
        )
        for fn in list(self._callbacks):
            try:
                fn(self)
            except Exception as err:
                log.warning("tfres memory budget: callback %r failed: %s", fn, err)

    def _enforce(self, now: float, *, extra: bool) -> None:
        if self.in_process:
            figures = (self.peak_bytes or 0, self.budget_bytes, self.reason or "")

            class _Over(BudgetExceededError):
                def __init__(self) -> None:
                    super().__init__(figures[2], used_bytes=figures[0], budget_bytes=figures[1])

            _Over.__name__ = _Over.__qualname__ = "BudgetExceededError"
            raise_in_main_thread(_Over)
        elif self.ladder is not None:
            self._escalate(now, extra=extra)

    def _escalate(self, now: float, *, extra: bool) -> None:
        """SIGTERM first; SIGKILL when, asked to stop, the tree still grows into the budget,
        or waits at the hard ceiling (where it has no memory to run a handler with)."""
        assert self.ladder is not None
        asked = self.ladder.terminated_at
        if extra or (asked is not None and now > asked):  # asked at an earlier reading
            self.ladder.kill()
        else:
            self.ladder.terminate()

    def to_dict(self) -> dict[str, Any]:
        """The ``record.control["budget"]`` entry: budget, thresholds, mechanisms, what happened."""
        return {
            "budget_bytes": self.budget_bytes,
            "soft_bytes": self.soft_bytes,
            "soft_ratio": self.soft_ratio,
            "interval_seconds": self.interval,
            "mechanisms": list(self.mechanisms),
            "measure": self.measure,
            "peak_bytes": self.peak_bytes,
            "exceeded": self.exceeded,
            "triggered_at_seconds": self.triggered_at_seconds,
            "over_at_seconds": self.over_at_seconds,
            "lead_seconds": self.lead_seconds,
            "killed": bool(self.ladder is not None and self.ladder.killed),
            "reason": self.reason,
        }


def limit_memory(
    budget: str | int | float,
    *,
    soft_ratio: float = DEFAULT_SOFT_RATIO,
    interval: float = DEFAULT_INTERVAL_SECONDS,
    pid: int | None = None,
    hard: bool = True,
) -> MemoryBudget:
    """Keep this process tree (or ``pid``'s) within ``budget``: ``"10%"``, ``"2GiB"`` or bytes.

    Returns the started :class:`MemoryBudget`. At the soft threshold ``budget.exceeded``
    turns True; at the budget, with ``hard=True``, the main thread gets a
    :class:`BudgetExceededError` (``pid=`` of another process: it gets SIGTERM, then
    SIGKILL). ``hard=False`` only warns and sets the flags. Call ``budget.stop()`` (or use it
    as a context manager) to stop watching. Percentages are of the RAM, or of the cgroup
    memory limit when lower.

        with tfres.limit_memory("2GiB") as budget:
            model.fit(x, y, callbacks=[tfres.callbacks.MemoryBudget(budget)])
    """
    return MemoryBudget(
        parse_budget(budget), soft_ratio=soft_ratio, interval=interval, pid=pid, hard=hard
    ).start()


# -- tf.data -------------------------------------------------------------------------------
def _budget_bytes(budget: MemoryBudget | str | int | float) -> int:
    return budget.budget_bytes if isinstance(budget, MemoryBudget) else parse_budget(budget)


def budget_options(budget: MemoryBudget | str | int | float, *, fraction: float = 0.5) -> Any:
    """``tf.data.Options`` whose autotuner keeps its buffers within ``fraction`` of ``budget``.

    Sets ``options.autotune.ram_budget`` (tf.data's own default is half the RAM; here half
    the budget, so prefetch buffers cannot take all of it).

        dataset = dataset.with_options(budget_options("2GiB"))
    """
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be above 0 and at most 1 (got {fraction!r})")

    options = tensorflow().data.Options()
    options.autotune.enabled = True
    options.autotune.ram_budget = int(_budget_bytes(budget) * fraction)
    return options


def apply_budget(
    dataset: Any, budget: MemoryBudget | str | int | float, *, fraction: float = 0.5
) -> Any:
    """``dataset.with_options(budget_options(budget))``: the tf.data autotuner gets the budget."""
    return dataset.with_options(budget_options(budget, fraction=fraction))
