"""The memory budget of ``tfres run --memory-budget``, and the budget's diagnosis finding.

:class:`BudgetWatcher` follows the watcher protocol of :func:`tfres.watch.command.watch`. When the
command starts it puts it in a cgroup with a hard limit where the kernel allows it
(``memory.high`` at the budget and ``memory.max`` 5% above on cgroup v2; on cgroup v1 a
ceiling 5% above the budget with the OOM killer disabled, so a process that reaches it
waits instead of dying) and starts a 20 Hz watchdog on the command's process tree. At the
soft threshold it logs and notes it; at the budget it sends the tree SIGTERM at once (and
tells :func:`watch`, which records why and sends SIGKILL after the grace period); a command
waiting at the cgroup ceiling gets 5% more room so it can run its SIGTERM handler. The record's
``control["budget"]`` says which mechanisms were active, the peak and when it triggered.
Both are imported from :mod:`tfres.budget.watchdog`.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from tfres.backends.memlimit import CGROUP_ROOT, HardLimit, memory_ceiling, systemd_scope_command
from tfres.record import Record
from tfres.timeline import Sample
from tfres.units import format_bytes

__all__ = [
    "BudgetWatcher",
    "budget_findings",
    "HARD_HEADROOM",
]

log = logging.getLogger("tfres")

#: the hard cgroup ceiling sits this far above the budget: the watchdog acts first, and the
#: ceiling catches what grows faster than the watchdog reads
HARD_HEADROOM = 0.05


class BudgetWatcher:
    """Hold a command's process tree within ``budget_bytes`` (for :func:`tfres.watch.command.watch`).

    ``hard_limit=False`` uses the watchdog alone. A budget of zero, negative or above the
    memory this machine (or its cgroup) has raises ``ValueError``.

        watch(["python", "train.py"], watchers=[BudgetWatcher(parse_budget("10%"))])
    """

    def __init__(
        self,
        budget_bytes: int,
        *,
        soft_ratio: float = 0.9,
        grace_seconds: float = 5.0,
        interval: float = 0.05,
        hard_limit: bool = True,
        cgroup_root: str | os.PathLike[str] = CGROUP_ROOT,
    ) -> None:
        from tfres.budget.watchdog import parse_budget

        self.budget_bytes = parse_budget(budget_bytes) if not isinstance(budget_bytes, bool) else 0
        if not 0 < soft_ratio <= 1:
            raise ValueError(f"soft_ratio must be above 0 and at most 1 (got {soft_ratio!r})")
        self.soft_ratio = soft_ratio
        self.grace_seconds = grace_seconds
        self.interval = interval
        self.hard_limit = hard_limit
        self._limit = HardLimit(root=cgroup_root)
        self._budget: Any = None
        self._wrapped: str | None = None
        self._noted_soft = False
        self.notes: list[str] = []

    @property
    def max_bytes(self) -> int:
        ceiling = memory_ceiling()[0]
        return min(ceiling, int(self.budget_bytes * (1 + HARD_HEADROOM)))

    def wrap_command(self, command: list[str]) -> list[str]:
        """``command`` under ``systemd-run --scope`` when no cgroup can be written directly.

        Optional hook for runners that can change the command before starting it.
        """
        if not self.hard_limit or self._limit._candidates(os.getpid()):
            return command
        wrapped, how = systemd_scope_command(
            command, high_bytes=self.budget_bytes, max_bytes=self.max_bytes
        )
        if wrapped is None:
            self.notes.append(f"no hard memory limit: {how}")
            return command
        self._wrapped = how
        return wrapped

    # -- the watcher protocol --------------------------------------------------------------
    def on_start(self, pid: int) -> None:
        from tfres.budget.watchdog import MemoryBudget

        budget = MemoryBudget(
            self.budget_bytes,
            soft_ratio=self.soft_ratio,
            interval=self.interval,
            pid=pid,
            hard=True,
            grace_seconds=self.grace_seconds,
        )
        if self._wrapped:
            budget.mechanisms.append(self._wrapped)
        elif self.hard_limit:
            how = self._limit.apply(pid, high_bytes=self.budget_bytes, max_bytes=self.max_bytes)
            if how is None:
                self.notes.append(f"no hard memory limit: {self._limit.reason}")
            else:
                budget.mechanisms.append(how)
                budget._extra_check = self._at_ceiling
        budget.on_exceeded(self._soft)
        self._budget = budget.start()

    def _at_ceiling(self) -> str | None:
        if not self._limit.under_oom():
            return None
        return (
            f"memory budget {format_bytes(self.budget_bytes)} exceeded: the process tree "
            f"reached the hard cgroup limit of {format_bytes(self._limit.max_bytes)}"
        )

    def _soft(self, budget: Any) -> None:
        self.notes.append(
            f"memory passed {round(self.soft_ratio * 100)}% of the budget "
            f"({format_bytes(budget.used_bytes)} of {format_bytes(self.budget_bytes)}) "
            f"at {budget.triggered_at_seconds:.1f} s"
        )

    def on_sample(self, sample: Sample) -> str | None:
        budget = self._budget
        if budget is None:
            return None
        if budget.over:
            self._lift_ceiling()
            return str(budget.reason)
        return None

    def _lift_ceiling(self) -> None:
        """Let a process waiting at the hard ceiling run its SIGTERM handler (5% more room).

        Only when it is waiting there (cgroup v1 ``under_oom``): a process that is not stuck
        handles SIGTERM within the limit it has.
        """
        if not self._limit.under_oom():
            return
        target = min(memory_ceiling()[0], int(self.budget_bytes * (1 + 2 * HARD_HEADROOM)))
        if self._limit.max_bytes is not None and self._limit.max_bytes < target:
            self._limit.raise_to(target)

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
        control["grace_seconds"] = self.grace_seconds
        self._limit.release()
        record.control["budget"] = control
        record.notes.extend(n for n in self.notes if n not in record.notes)


# -- diagnosis --------------------------------------------------------------------------


def budget_findings(record: Record) -> list[Any]:
    """Findings of a run under a memory budget (``record.control["budget"]``).

    - ``budget_reached``: the soft threshold was crossed but the budget did not stop the run
      (a run it stopped is :func:`tfres.diagnosis.rules.memory.out_of_memory`'s finding).

    Data loaded whole before training is :func:`tfres.diagnosis.rules.memory.streaming`'s finding,
    which measures it against the budget when one is set. A record with no budget gives no
    findings. :mod:`tfres.diagnosis.rules` runs this with the others.
    """
    budget = (record.control or {}).get("budget")
    if not isinstance(budget, dict) or not isinstance(budget.get("budget_bytes"), int):
        return []
    limit = int(budget["budget_bytes"])
    found: list[Any] = []
    at = budget.get("triggered_at_seconds")
    if budget.get("exceeded") and at is not None and not budget.get("reason"):
        # a run the budget stopped is the out_of_memory rule's "Stopped by the memory budget"
        found.append(_reached_finding(budget, limit, float(at)))
    return found


def _reached_finding(budget: dict[str, Any], limit: int, at: float) -> Any:
    from tfres.diagnosis.diagnose import Finding

    soft = round(float(budget.get("soft_ratio") or 0.9) * 100)
    mechanisms = ", ".join(budget.get("mechanisms") or ["watchdog"])
    return Finding(
        rule="budget_reached",
        severity="warning",
        title=f"Memory passed {soft}% of its budget",
        evidence=(
            f"memory passed {soft}% of the {format_bytes(limit)} budget at t={at:.1f} s; peak "
            f"{format_bytes(budget.get('peak_bytes'))}; mechanisms: {mechanisms}"
        ),
        cause="the run needs nearly all of its budget: the batch size, a cache or arrays "
        "held whole",
        fix="find the batch size that fits: tfres batch-size script.py:build_model "
        f"--budget {format_bytes(limit).replace(' ', '')}; stream data with tf.data; or "
        "raise the budget",
        span=(at, at),
        impact=0.5,
    )
