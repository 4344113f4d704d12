"""The memory budget's own finding: ``budget_reached``.

A run under ``tfres run --memory-budget`` (or :func:`tfres.limit_memory`) carries
``record.control["budget"]``; this rule reads it. A run the budget stopped is
:func:`tfres.diagnosis.rules.memory.out_of_memory`'s "Stopped by the memory budget"; data
loaded whole is :func:`tfres.diagnosis.rules.memory.streaming`'s finding.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tfres.diagnosis.facts import RunFacts
from tfres.diagnosis.rules.base import Finding
from tfres.units import format_bytes

__all__ = ["budget_reached"]


def budget_reached(facts: RunFacts) -> Iterator[Finding]:
    """The soft threshold was crossed but the budget did not stop the run.

    A record with no budget gives no findings.
    """
    budget = (facts.record.control or {}).get("budget")
    if not isinstance(budget, dict) or not isinstance(budget.get("budget_bytes"), int):
        return
    at = budget.get("triggered_at_seconds")
    if budget.get("exceeded") and at is not None and not budget.get("reason"):
        yield _reached_finding(budget, int(budget["budget_bytes"]), float(at))


def _reached_finding(budget: dict[str, Any], limit: int, at: float) -> Finding:
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
