"""The :class:`Finding` every diagnosis rule returns, and the helpers rules share."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from tfres.diagnosis.facts import RunFacts
from tfres.units import format_bytes, format_seconds

__all__ = ["Finding", "Rule", "SEVERITIES", "sort_findings", "span_text", "pct", "cores"]

#: From most to least urgent; findings are sorted in this order, then by impact.
SEVERITIES = ("critical", "warning", "info")


@dataclass(frozen=True)
class Finding:
    """One thing a rule found in a record, in words a user can act on.

    ``evidence`` holds the numbers from the record and the time span they cover; ``cause``
    the likely reason; ``fix`` a concrete code line or command. ``span`` is
    ``(start_seconds, end_seconds)`` on the record's timeline, or None when the finding is
    about the machine rather than a stretch of the run. ``impact`` (0-1, the share of the
    run at stake) orders findings of the same severity; ``risk`` marks a finding that says
    the run may fail (be killed) rather than only run slowly, and sorts it before the speed
    findings of its severity. Neither is saved in the record, where the order of
    ``record.findings`` already says it.

        Finding(rule="input_bound", severity="warning", title="Highly input-bound",
                evidence="input wait 48% of step time over 120 steps (t=4.2-10.6 s)",
                cause="...", fix="dataset = dataset.prefetch(tf.data.AUTOTUNE)")
    """

    rule: str
    severity: str  # "critical" | "warning" | "info"
    title: str
    evidence: str
    cause: str
    fix: str
    span: tuple[float, float] | None = None
    impact: float = field(default=0.0, compare=False)
    risk: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(
                f"severity must be one of {', '.join(SEVERITIES)} (got {self.severity!r})"
            )

    def to_dict(self) -> dict[str, Any]:
        """``{rule, severity, title, evidence, span, cause, fix}``, as in ``record.findings``."""
        d = asdict(self)
        d.pop("impact")
        d.pop("risk")
        d["span"] = [round(self.span[0], 3), round(self.span[1], 3)] if self.span else None
        return {k: d[k] for k in ("rule", "severity", "title", "evidence", "span", "cause", "fix")}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Finding:
        span = d.get("span")
        return cls(
            rule=str(d.get("rule", "")),
            severity=str(d.get("severity", "info")),
            title=str(d.get("title", "")),
            evidence=str(d.get("evidence", "")),
            cause=str(d.get("cause", "")),
            fix=str(d.get("fix", "")),
            span=(float(span[0]), float(span[1])) if span else None,
        )


#: A rule reads the facts of one record and returns what it found (often nothing).
Rule = Callable[[RunFacts], Iterable[Finding]]


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Most severe first; within a severity, what may make the run fail before what makes it
    slow, then the largest impact first. The first one is the top finding."""
    return sorted(findings, key=lambda f: (SEVERITIES.index(f.severity), not f.risk, -f.impact))


def span_text(span: tuple[float, float] | None) -> str:
    """``"t=4.2-10.6 s"`` for evidence lines."""
    if span is None:
        return "whole run"
    return f"t={span[0]:.1f}-{span[1]:.1f} s"


def pct(fraction: float) -> str:
    """A 0-1 fraction as a whole percentage: ``pct(0.483) == "48%"``."""
    return f"{fraction * 100:.0f}%"


def cores(n: float) -> str:
    """``cores(1.0) == "1 core"``, ``cores(2.5) == "2.5 cores"``."""
    text = f"{n:.1f}".rstrip("0").rstrip(".")
    return f"{text} core" if text == "1" else f"{text} cores"


def size(n: float | None) -> str:
    return format_bytes(n)


def seconds(s: float | None) -> str:
    return format_seconds(s)
