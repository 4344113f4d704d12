"""The diagnosis rules, one module per area; :data:`RULES` is the list ``diagnose()`` runs.

A rule is a function ``rule(facts: RunFacts) -> Iterable[Finding]`` (see
:mod:`tfres.diagnosis.facts`); rules that want only the record can be adapted with
:func:`record_rule`. Extend the list to add a rule:

    from tfres.diagnosis.rules import RULES
    RULES.append(my_rule)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from tfres.diagnosis.facts import RunFacts
from tfres.diagnosis.rules.base import Finding, Rule
from tfres.diagnosis.rules.budget import budget_reached
from tfres.diagnosis.rules.callbacks import batch_callbacks
from tfres.diagnosis.rules.cpu import (
    background_load,
    cpu_bound,
    thread_oversubscription,
    threads_starved,
)
from tfres.diagnosis.rules.gpu import (
    gpu_copy_bound,
    gpu_idle,
    gpu_memory_peak,
    gpu_not_used,
    gpu_underused,
)
from tfres.diagnosis.rules.gpu_clocks import gpu_throttled
from tfres.diagnosis.rules.input import input_bound
from tfres.diagnosis.rules.memory import (
    memory_growth,
    memory_pressure,
    out_of_memory,
    streaming,
    swap_growth,
)
from tfres.diagnosis.rules.phases import compute_bound, phase_share, startup
from tfres.record import Record

__all__ = ["RULES", "Rule", "record_rule"]

log = logging.getLogger("tfres")


def record_rule(fn: Callable[[Record], Iterable[Finding]]) -> Rule:
    """Adapt a rule over the record alone (``fn(record)``) to the rule signature."""

    def rule(facts: RunFacts) -> Iterable[Finding]:
        return fn(facts.record)

    rule.__name__ = getattr(fn, "__name__", "record_rule")
    return rule


RULES: list[Rule] = [
    out_of_memory,
    gpu_not_used,
    memory_pressure,
    swap_growth,
    memory_growth,
    input_bound,
    threads_starved,
    thread_oversubscription,
    background_load,
    cpu_bound,
    gpu_idle,
    gpu_underused,
    gpu_copy_bound,
    gpu_memory_peak,
    gpu_throttled,
    streaming,
    budget_reached,
    startup,
    phase_share,
    batch_callbacks,
    compute_bound,
]
