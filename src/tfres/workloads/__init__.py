"""The standard workloads of ``tfres bench``: one module per workload, one registry.

Each module defines ``WORKLOAD``, a :class:`Workload` whose ``run(ctx)`` returns result
dicts with exactly the keys of :data:`RESULT_KEYS` (``docs/record-format.md``, the
``workloads`` section). The registry :data:`WORKLOADS` maps names to workloads in the order
``tfres bench`` runs them; adding a workload is one line in :data:`_MODULES`.

    from tfres.workloads import WORKLOADS, WorkloadContext
    results = WORKLOADS["cpu_matmul"].run(WorkloadContext(quick=True))

No workload module imports TensorFlow at import time: ``import tfres.workloads`` is cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from tfres.workloads._context import (
    RESULT_KEYS,
    ProgressCallback,
    Span,
    Workload,
    WorkloadContext,
    error_text,
    make_result,
    median,
)

__all__ = [
    "RESULT_KEYS",
    "WORKLOADS",
    "ProgressCallback",
    "Span",
    "Workload",
    "WorkloadContext",
    "error_text",
    "make_result",
    "median",
    "variant",
]


# One line per workload module; the registry keeps this order.
_MODULES = (
    "tfres.workloads.cpu_matmul",
    "tfres.workloads.tf_matmul",
    "tfres.workloads.train_small",
    "tfres.workloads.batch_sweep",
    "tfres.workloads.input_pipeline",
    "tfres.workloads.overlap",
)


def _load_registry() -> dict[str, Workload]:
    registry: dict[str, Workload] = {}
    for module_name in _MODULES:
        workload = importlib.import_module(module_name).WORKLOAD
        registry[workload.name] = workload
    return registry


#: name -> workload, in the order ``tfres bench`` runs them
WORKLOADS: dict[str, Workload] = _load_registry()


def variant(result: Mapping[str, Any]) -> str:
    """A short name for one result row: ``"cpu_matmul n=2000"``, ``"train_small fit"``."""
    detail = (result.get("details") or {}).get("variant")
    name = str(result.get("name"))
    return f"{name} {detail}" if detail else name
