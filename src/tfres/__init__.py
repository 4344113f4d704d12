"""tfres: see and control how TensorFlow and Keras programs use CPU, GPU and memory.

``import tfres`` is cheap and imports neither TensorFlow nor NVML: every name below is
loaded on first use, so the monitoring half works for any Python program.

    import tfres
    with tfres.monitor(label="exp1") as m:
        train()
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tfres.errors import (
    BudgetExceededError,
    MissingDependencyError,
    NoGpuError,
    RecordError,
    StoreError,
    TfresError,
    TooLateError,
)
from tfres.version import __version__

# public name -> (module, attribute); resolved lazily by __getattr__ below
_LAZY: dict[str, tuple[str, str]] = {
    "fingerprint": ("tfres.machine.fingerprint", "fingerprint"),
    "Fingerprint": ("tfres.machine.fingerprint", "Fingerprint"),
    "Sampler": ("tfres.sampler.sampler", "Sampler"),
    "Sample": ("tfres.timeline", "Sample"),
    "monitor": ("tfres.report.monitoring", "monitor"),
    "Monitor": ("tfres.watch.monitor", "Monitor"),
    "Record": ("tfres.record", "Record"),
    "load_record": ("tfres.record", "load"),
    "save_record": ("tfres.record", "save"),
    "open_store": ("tfres.store", "open_store"),
    "doctor": ("tfres.machine.doctor", "doctor"),
    "bench": ("tfres.benchmark", "bench"),
    "diagnose": ("tfres.diagnosis.diagnose", "diagnose"),
    "compare": ("tfres.comparison.compare", "compare"),
    "configure": ("tfres.devices.configure", "configure"),
    "limit_memory": ("tfres.budget.watchdog", "limit_memory"),
    "find_batch_size": ("tfres.batchsize.finder", "find_batch_size"),
    "advise_placement": ("tfres.placement.advisor", "advise_placement"),
    "strategy": ("tfres.placement.strategy", "strategy"),
    "input_pipeline": ("tfres.placement.pipeline", "input_pipeline"),
    "overlap": ("tfres.placement.pipeline", "overlap"),
}

__all__ = [
    "__version__",
    "TfresError",
    "MissingDependencyError",
    "NoGpuError",
    "TooLateError",
    "BudgetExceededError",
    "RecordError",
    "StoreError",
    *_LAZY,
]


# submodules reachable as attributes after a plain ``import tfres`` (``tfres.steps.timed``)
_SUBMODULES: dict[str, str] = {
    "callbacks": "tfres.callbacks",
    "export": "tfres.export",
    "steps": "tfres.watch.steps",
    "pipeline": "tfres.placement.pipeline",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module_name, attr = _LAZY[name]
        value = getattr(importlib.import_module(module_name), attr)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(_SUBMODULES[name])
    raise AttributeError(f"module 'tfres' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*__all__, *_SUBMODULES])


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from tfres.machine.fingerprint import Fingerprint as Fingerprint
    from tfres.machine.fingerprint import fingerprint as fingerprint
    from tfres.record import Record as Record
    from tfres.report.monitoring import monitor as monitor
    from tfres.sampler.sampler import Sampler as Sampler
    from tfres.timeline import Sample as Sample
    from tfres.watch.monitor import Monitor as Monitor
