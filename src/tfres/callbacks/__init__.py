"""Keras callbacks, one per module; each imports Keras only when it is first used.

- :class:`ResourceMonitor` (:mod:`tfres.callbacks.resource_monitor`)
- :class:`MemoryBudget` (:mod:`tfres.callbacks.memory_budget`)
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "ResourceMonitor": "tfres.callbacks.resource_monitor",
    "MemoryBudget": "tfres.callbacks.memory_budget",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tfres.callbacks' has no attribute {name!r}")
