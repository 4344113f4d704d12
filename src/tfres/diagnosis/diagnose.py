"""Diagnosis: rules over a record that say what holds a run back, with evidence and a fix.

``diagnose(record)`` runs every rule in :data:`tfres.diagnosis.rules.RULES` and returns the
findings, most severe first and, within a severity, the largest impact first, a cause
before the symptom it explains (memory growing in a straight line before memory near its
limit): ``findings[0]`` is "the top finding". Each :class:`Finding` carries the numbers from the
record with their time span (``evidence``), the likely ``cause`` and a concrete ``fix``
(a code line or a command). ``Finding.to_dict()`` gives
``{rule, severity, title, evidence, span, cause, fix}``, the form saved in ``record.findings``.

    findings = tfres.diagnose(record)
    if findings:
        print(findings[0].title, "-", findings[0].fix)

A rule that fails is logged and skipped: diagnosis never breaks the run that asked for it.
Thresholds are named constants in the rule modules (``tfres.rules.input.INPUT_BOUND_HIGH``
...), each with a comment on where it comes from.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from tfres.diagnosis.facts import run_facts
from tfres.diagnosis.rules import RULES
from tfres.diagnosis.rules.base import SEVERITIES, Finding, Rule, sort_findings
from tfres.record import Record

__all__ = ["Finding", "diagnose", "RULES", "SEVERITIES", "top_finding"]

log = logging.getLogger("tfres")


def diagnose(record: Record, *, rules: Sequence[Rule] | None = None) -> list[Finding]:
    """The findings of ``rules`` (default: all of :data:`RULES`) over ``record``, sorted.

    A record with no samples, steps or fingerprint gives fewer findings, never an error.
    """
    facts = run_facts(record)
    found: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for rule in RULES if rules is None else rules:
        try:
            for finding in rule(facts):
                if (finding.rule, finding.title) not in seen:
                    seen.add((finding.rule, finding.title))
                    found.append(finding)
        except Exception as err:  # one broken rule must not hide the others
            log.warning("tfres: diagnosis rule %s failed: %s", getattr(rule, "__name__", rule), err)
    return _causes_first(sort_findings(_without_repeats(found)))


#: a finding that says the same as a more specific one is left out
_SAID_BY = {
    "compute_bound": ("cpu_bound", "input_bound", "cpu_single_core", "batch_callbacks"),
}
#: a finding that another one explains comes right after it, when both have one severity:
#: memory near its limit because it grows in a straight line is, first, memory that grows
#: (the fix is the leak; a smaller batch only delays it)
#: and one core pegged while Python callbacks hold the steps is those callbacks
_EXPLAINED_BY = {
    "memory_pressure": ("memory_growth",),
    "cpu_single_core": ("batch_callbacks",),
}


def _without_repeats(found: list[Finding]) -> list[Finding]:
    rules = {f.rule for f in found}
    return [f for f in found if not rules.intersection(_SAID_BY.get(f.rule, ()))]


def _causes_first(found: list[Finding]) -> list[Finding]:
    out = list(found)
    for symptom, causes in _EXPLAINED_BY.items():
        at = next((i for i, f in enumerate(out) if f.rule == symptom), None)
        if at is None:
            continue
        cause = next(
            (f for f in out[at + 1 :] if f.rule in causes and f.severity == out[at].severity),
            None,
        )
        if cause is not None:
            out.remove(cause)
            out.insert(at, cause)
    return out


def top_finding(record: Record) -> Finding | None:
    """The first finding of :func:`diagnose`, or None when nothing stands out."""
    findings = diagnose(record)
    return findings[0] if findings else None
