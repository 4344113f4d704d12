"""The tfres error tree.

Every error tfres raises on purpose is a :class:`TfresError`; ``str(exc)`` is one line a
user can act on: what went wrong, the value, what to do. The CLI prints it as
``tfres: error: ...`` and exits 1. Bad arguments are plain ``ValueError`` s that show the
value received, the way psutil and Keras report them.
"""

from __future__ import annotations

__all__ = [
    "TfresError",
    "MissingDependencyError",
    "NoGpuError",
    "TooLateError",
    "BudgetExceededError",
    "RecordError",
    "StoreError",
]


class TfresError(Exception):
    """Base class of every error tfres raises on purpose."""


class MissingDependencyError(TfresError, ImportError):
    """An optional dependency is not installed; the message names the pip extra."""

    def __init__(self, package: str, purpose: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{package} is needed for {purpose}; install with: pip install 'tfres[{extra}]'"
        )


class NoGpuError(TfresError):
    """A GPU was asked for but none is usable here (the message says why)."""


class TooLateError(TfresError):
    """A device setting was changed after the TensorFlow runtime had started."""


class BudgetExceededError(TfresError):
    """The watched memory went past its budget; carries the figures."""

    def __init__(self, message: str, *, used_bytes: int, budget_bytes: int) -> None:
        self.used_bytes = used_bytes
        self.budget_bytes = budget_bytes
        super().__init__(message)


class RecordError(TfresError):
    """A run record could not be read or written (truncated, foreign, newer version, ...)."""


class StoreError(TfresError):
    """The local store could not be opened or has no such record."""
