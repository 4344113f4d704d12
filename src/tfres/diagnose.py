"""Diagnosis: rules over a record that produce findings (placeholder until the rules land).

Contract: ``diagnose(record) -> list[Finding]``; ``Finding.to_dict()`` gives
``{"rule", "severity", "title", "evidence", "span", "cause", "fix"}``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tfres.record import Record

__all__ = ["Finding", "diagnose"]


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str  # "critical" | "warning" | "info"
    title: str
    evidence: str
    cause: str
    fix: str
    span: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["span"] = list(self.span) if self.span else None
        return d


def diagnose(record: Record) -> list[Finding]:
    return []
