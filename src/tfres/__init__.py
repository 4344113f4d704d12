"""tfres: see and control how TensorFlow and Keras programs use CPU, GPU and memory.

``import tfres`` is cheap and imports neither TensorFlow nor NVML: every name below is
loaded on first use, so the monitoring half works for any Python program.

    import tfres
    with tfres.monitor(label="exp1") as m:
        train()
"""

from __future__ import annotations

import importlib
import sys
import types
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

__version__ = "0.1.0"

# public name -> (module, attribute); resolved lazily by __getattr__ below
_LAZY: dict[str, tuple[str, str]] = {
    "fingerprint": ("tfres.fingerprint", "fingerprint"),
    "Fingerprint": ("tfres.fingerprint", "Fingerprint"),
    "Sampler": ("tfres.sampler", "Sampler"),
    "Sample": ("tfres.timeline", "Sample"),
    "monitor": ("tfres.monitor", "monitor"),
    "Monitor": ("tfres.monitor", "Monitor"),
    "Record": ("tfres.record", "Record"),
    "load_record": ("tfres.record", "load"),
    "save_record": ("tfres.record", "save"),
    "open_store": ("tfres.store", "open_store"),
    "doctor": ("tfres.doctor", "doctor"),
    "bench": ("tfres.bench", "bench"),
    "diagnose": ("tfres.diagnose", "diagnose"),
    "compare": ("tfres.compare", "compare"),
    "configure": ("tfres.devices", "configure"),
    "limit_memory": ("tfres.budget", "limit_memory"),
    "find_batch_size": ("tfres.batchsize", "find_batch_size"),
    "advise_placement": ("tfres.placement", "advise_placement"),
    "strategy": ("tfres.strategy", "strategy"),
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


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module_name, attr = _LAZY[name]
        value = getattr(importlib.import_module(module_name), attr)
        globals()[name] = value
        return value
    if name in ("callbacks", "steps"):
        return importlib.import_module(f"tfres.{name}")
    raise AttributeError(f"module 'tfres' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*__all__, "callbacks", "steps"])


class _Package(types.ModuleType):
    """Keeps ``tfres.monitor`` (and ``fingerprint``, ``doctor``, ...) the public function
    after the submodule of the same name is imported: the import system then sets
    ``tfres.monitor`` to the submodule, which would shadow the function."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            module_name, attr = _LAZY[name]
            if value.__name__ == module_name and hasattr(value, attr):
                value = getattr(value, attr)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from tfres.fingerprint import Fingerprint as Fingerprint
    from tfres.fingerprint import fingerprint as fingerprint
    from tfres.monitor import Monitor as Monitor
    from tfres.monitor import monitor as monitor
    from tfres.record import Record as Record
    from tfres.sampler import Sampler as Sampler
    from tfres.timeline import Sample as Sample
