"""One check of ``tfres doctor`` (:class:`Check`) and the TensorFlow facts the checks read
from a machine fingerprint (:mod:`tfres.machine.doctor` runs them).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tfres.machine.fingerprint import Fingerprint

__all__ = [
    "Check",
    "STATUSES",
    "exit_status",
    "tf_facts",
    "tf_version",
    "tf_series",
    "tf_gpus",
    "version_tuple",
]

STATUSES = ("ok", "warn", "fail", "skip")


@dataclass(frozen=True)
class Check:
    """One doctor check: ``status`` is ``ok``, ``warn``, ``fail`` or ``skip``.

    ``causes`` names the known causes found (``gpu_visible`` only), e.g.
    ``("cpu_only_wheel",)``; ``fix`` is empty when nothing needs fixing.
    """

    name: str
    status: str
    evidence: str
    fix: str = ""
    title: str = ""
    causes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"check status must be one of {STATUSES} (got {self.status!r})")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["causes"] = list(self.causes)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Check:
        return cls(
            name=str(d["name"]),
            status=str(d["status"]),
            evidence=str(d.get("evidence", "")),
            fix=str(d.get("fix", "")),
            title=str(d.get("title", "")),
            causes=tuple(d.get("causes") or ()),
        )


def exit_status(checks: list[Check]) -> int:
    """1 when any check failed, else 0 (a warning is not a failure)."""
    return 1 if any(c.status == "fail" for c in checks) else 0


def tf_facts(fp: Fingerprint) -> dict[str, Any]:
    return fp.tensorflow or {}


def tf_version(fp: Fingerprint) -> tuple[int, int] | None:
    version = tf_facts(fp).get("version")
    try:
        major, minor = str(version).split(".")[:2]
        return int(major), int(minor)
    except (ValueError, TypeError):
        return None


def version_tuple(text: Any) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in str(text).split(".")[:2])
    except (ValueError, TypeError):
        return None


def tf_series(fp: Fingerprint) -> str:
    v = tf_version(fp)
    return f"{v[0]}.{v[1]}" if v else "2.21"


def tf_gpus(fp: Fingerprint) -> list[dict[str, Any]] | None:
    devices = tf_facts(fp).get("physical_devices")
    if devices is None:
        return None
    return [d for d in devices if d.get("device_type") == "GPU"]
