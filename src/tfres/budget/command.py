"""The memory budget of ``tfres run --memory-budget``.

:class:`BudgetWatcher` follows the watcher protocol of :func:`tfres.watch.command.watch`.
The command starts inside a cgroup of its own where the kernel allows it, with a hard limit
at 95% of the budget (:data:`HARD_CEILING_RATIO`: the kernel charges anonymous memory and
page cache, while RSS also counts the library pages a process maps, ~5% of a small one):
``memory.high`` at 90% and ``memory.max`` on cgroup v2, ``memory.limit_in_bytes`` on cgroup
v1 with the OOM killer disabled, so a process that reaches it waits instead of dying, and
tfres ends it. A 20 Hz watchdog reads the tree's RSS (:class:`tfres.budget.watchdog.MemoryBudget`).

It acts before the budget: at 90% of it, or earlier when the growth rate would reach it within
two readings, it asks the command to stop:

- with ``checkpoint`` (``tfres run --checkpoint PATH``, which sets ``TFRES_CHECKPOINT=PATH`` for
  the command): SIGUSR1 to the command, which tfres's start-up hook in a Keras program takes as
  "stop at the next batch and save a checkpoint"; a command still running ``grace_seconds``
  later gets SIGTERM, then SIGKILL (the kill ladder);
- without: SIGTERM to the whole tree at once, then SIGKILL after ``grace_seconds``.

A tree that still grows into the budget after SIGTERM, or waits at the cgroup ceiling, gets
SIGKILL at once. The record's ``control["budget"]`` says which mechanisms were active, the
peak, when and how it was asked to stop (its diagnosis: :mod:`tfres.diagnosis.rules.budget`).
"""

from __future__ import annotations

import logging
import os
import signal
from typing import Any

from tfres.backends.memlimit import (
    CGROUP_ROOT,
    HardLimit,
    memory_ceiling,
    systemd_scope_command,
)
from tfres.backends.signals import DEFAULT_GRACE_SECONDS
from tfres.budget.watchdog import MemoryBudget
from tfres.record import Record
from tfres.timeline import Sample
from tfres.units import format_bytes

__all__ = ["BudgetWatcher", "check_budget_bytes", "HARD_CEILING_RATIO", "STOP_REQUEST_SIGNAL"]

log = logging.getLogger("tfres")

#: what the command gets at the soft threshold with --checkpoint: "stop at the next batch
#: and save a checkpoint to $TFRES_CHECKPOINT" (tfres's start-up hook handles it in Keras)
STOP_REQUEST_SIGNAL = signal.SIGUSR1
#: the cgroup ceiling, as a share of the budget: what outgrows the watchdog (a list that
#: grows by GB/s) stops there, with its RSS, library pages included, within the budget
HARD_CEILING_RATIO = 0.95
#: the ceiling is moved in steps of at least this, and kept this far under the budget
CEILING_MARGIN_BYTES = 2 * 2**20


def check_budget_bytes(budget_bytes: int) -> int:
    """``budget_bytes`` if it is a usable budget here (parsed already), else ValueError."""
    if isinstance(budget_bytes, bool) or not isinstance(budget_bytes, int) or budget_bytes <= 0:
        raise ValueError(f"memory budget must be above 0 (got {budget_bytes!r})")
    total, what = memory_ceiling()
    if budget_bytes > total:
        raise ValueError(
            f"memory budget {budget_bytes!r} ({format_bytes(budget_bytes)}) is above the "
            f"{format_bytes(total)} of {what}; pick a smaller size or a percentage like '80%'"
        )
    return budget_bytes


class BudgetWatcher:
    """Hold a command's process tree within ``budget_bytes`` under ``tfres run``.

    ``budget_bytes`` comes parsed (:func:`tfres.budget.watchdog.parse_budget`); zero,
    negative or above this machine's (or cgroup's) memory raises ``ValueError``.
    ``checkpoint`` is the path the command saves to when asked (see the module docstring);
    ``hard_limit=False`` uses the watchdog alone.

        watch(["python", "train.py"], watchers=[BudgetWatcher(parse_budget("10%"))])
    """

    def __init__(
        self,
        budget_bytes: int,
        *,
        checkpoint: str | os.PathLike[str] | None = None,
        soft_ratio: float = 0.9,
        grace_seconds: float = DEFAULT_GRACE_SECONDS,
        interval: float = 0.05,
        hard_limit: bool = True,
        cgroup_root: str | os.PathLike[str] = CGROUP_ROOT,
    ) -> None:
        self.budget_bytes = check_budget_bytes(budget_bytes)
        if not 0 < soft_ratio <= 1:
            raise ValueError(f"soft_ratio must be above 0 and at most 1 (got {soft_ratio!r})")
        self.checkpoint = None if checkpoint is None else str(checkpoint)
        self.soft_ratio = soft_ratio
        self.grace_seconds = grace_seconds
        self.interval = interval
        self.hard_limit = hard_limit
        self._limit = HardLimit(root=cgroup_root)
        self._budget: Any = None
        self._supervisor: Any = None
        self._wrapped: str | None = None
        self.asked_with: str | None = None
        self.notes: list[str] = []

    @property
    def max_bytes(self) -> int:
        """The hard ceiling: :data:`HARD_CEILING_RATIO` of the budget."""
        return min(memory_ceiling()[0], int(self.budget_bytes * HARD_CEILING_RATIO))

    @property
    def high_bytes(self) -> int:
        """Where cgroup v2 starts to throttle and reclaim: the soft threshold."""
        return min(self.max_bytes, int(self.budget_bytes * self.soft_ratio))

    def wrap_command(self, command: list[str]) -> list[str]:
        """``command`` made to start inside its cgroup (or under ``systemd-run --scope`` when
        no cgroup can be written directly), so the limit holds from its first allocation.

        Optional hook for runners that can change the command before starting it.
        """
        if not self.hard_limit:
            return command
        how = self._limit.prepare(high_bytes=self.high_bytes, max_bytes=self.max_bytes)
        if how is not None:
            self._wrapped = how
            return self._limit.command(command)
        wrapped, why = systemd_scope_command(
            command, high_bytes=self.high_bytes, max_bytes=self.max_bytes
        )
        if wrapped is None:
            self.notes.append(f"no hard memory limit: {self._limit.reason}; {why}")
            self.hard_limit = False  # nothing more to try in on_start
            return command
        self._wrapped = why
        return wrapped

    # -- the watcher protocol --------------------------------------------------------------
    def bind(self, supervisor: Any) -> None:
        """Optional hook: stop through the supervisor's ladder (``request_stop``, ``ladder``)."""
        self._supervisor = supervisor

    def on_start(self, pid: int) -> None:
        sup = self._supervisor
        budget = MemoryBudget(
            self.budget_bytes,
            soft_ratio=self.soft_ratio,
            interval=self.interval,
            pid=pid,
            hard=True,
            grace_seconds=self.grace_seconds,
            ladder=getattr(sup, "ladder", None),
        )
        if self._wrapped:
            budget.mechanisms.append(self._wrapped)
            if self._limit.mechanism is not None:
                budget._extra_check = self._at_ceiling
        elif self.hard_limit:
            how = self._limit.apply(pid, high_bytes=self.high_bytes, max_bytes=self.max_bytes)
            if how is None:
                self.notes.append(f"no hard memory limit: {self._limit.reason}")
            else:
                budget.mechanisms.append(how)
                budget._extra_check = self._at_ceiling
        budget.on_exceeded(self._soft)
        self._budget = budget.start()

    def _at_ceiling(self) -> str | None:
        """Called at every reading: fit the ceiling, and say if the tree waits at it."""
        self._fit_ceiling()
        if not self._limit.under_oom():
            return None
        return (
            f"memory budget {format_bytes(self.budget_bytes)}: the process tree reached the "
            f"hard cgroup limit of {format_bytes(self._limit.max_bytes)}"
        )

    def _fit_ceiling(self) -> None:
        """Lower the cgroup ceiling by what RSS counts and the cgroup does not (library pages,
        pages shared between the tree's processes), so the tree's RSS stays within budget."""
        budget = self._budget
        used, charged = getattr(budget, "used_bytes", None), self._limit.usage_bytes()
        if used is None or charged is None:
            return
        uncharged = max(0, used - charged)
        target = min(self.max_bytes, self.budget_bytes - uncharged - CEILING_MARGIN_BYTES)
        if abs(target - (self._limit.max_bytes or 0)) >= CEILING_MARGIN_BYTES:
            self._limit.raise_to(max(target, self.budget_bytes // 2))

    def _soft(self, budget: Any) -> None:
        """The soft threshold (or the trend): ask the command to stop, before the budget."""
        used, at = format_bytes(budget.used_bytes), budget.triggered_at_seconds
        self.notes.append(
            f"memory passed {round(self.soft_ratio * 100)}% of the budget or was growing into "
            f"it ({used} of {format_bytes(self.budget_bytes)}) at {at:.1f} s"
        )
        self.asked_with = "SIGUSR1 (checkpoint)" if self.checkpoint else "SIGTERM"
        reason = (
            f"memory budget {format_bytes(self.budget_bytes)}: the process tree used {used} at "
            f"{at:.1f} s; asked to stop before the budget with {self.asked_with}"
        )
        budget.reason = budget.reason or reason
        sup = self._supervisor
        ask = STOP_REQUEST_SIGNAL if self.checkpoint else None
        if sup is not None:
            sup.request_stop(reason, ask=ask)
        elif budget.ladder is not None:
            if ask is not None:
                budget.ladder.send_leader(ask)
            else:
                budget.ladder.terminate()

    def on_sample(self, sample: Sample) -> str | None:
        """The reason to stop, for a runner that did not :meth:`bind` (bound, the watchdog
        has already asked through the supervisor, in its own way)."""
        budget = self._budget
        if self._supervisor is not None or budget is None:
            return None
        return str(budget.reason) if budget.over or budget.exceeded else None

    def on_stop(self, record: Record) -> None:
        budget = self._budget
        control: dict[str, Any] = {
            "budget_bytes": self.budget_bytes,
            "soft_bytes": int(self.budget_bytes * self.soft_ratio),
            "mechanisms": ["watchdog"],
        }
        if budget is not None:
            budget.stop()
            control = budget.to_dict()
            rss = [s.process_rss_bytes for s in record.samples if s.process_rss_bytes is not None]
            if rss and budget.measure == "rss":
                control["peak_bytes"] = max([budget.peak_bytes or 0, *rss])
        control["hard_limit_bytes"] = self._limit.max_bytes if self._limit.mechanism else None
        control["cgroup_oom_kills"] = self._limit.oom_kills()
        control["grace_seconds"] = self.grace_seconds
        control["asked_with"] = self.asked_with
        control["checkpoint"] = self.checkpoint
        if self.checkpoint and self.asked_with:
            control["checkpoint_written"] = os.path.exists(self.checkpoint)
        self._limit.release()
        record.control["budget"] = control
        record.notes.extend(n for n in self.notes if n not in record.notes)
