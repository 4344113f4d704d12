"""The machine fingerprint (placeholder until the fingerprint work lands)."""

from __future__ import annotations

import platform
import socket
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Fingerprint", "fingerprint"]


@dataclass(frozen=True)
class Fingerprint:
    sections: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.sections)


def fingerprint() -> Fingerprint:
    return Fingerprint({"host": {"hostname": socket.gethostname(), "os": platform.platform()}})
