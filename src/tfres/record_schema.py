"""The types of a record's fields, checked in one place when a record is read.

Every reader of a record (reports, diagnosis, compare, exports) trusts what
:func:`check_record` let through: a known field holds the type ``docs/record-format.md``
gives it, or the record is refused with one :class:`~tfres.errors.RecordError` line naming
the field, the value and what to do. Three rules cover the whole document:

- the fields of the record, of a sample, a GPU sample, a mark and a phase have their types;
- anywhere in the document, a key named with a unit (``*_bytes``, ``*_seconds``,
  ``*_percent``, ...) holds a number or null (or a list or object of them), and a
  key naming a text (``label``, ``name``, ``title``, ...) holds text or null;
- nothing nests deeper than :data:`MAX_DEPTH`.

A list or object field that is ``null`` reads as empty; any other wrong type is refused.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

from tfres.errors import RecordError

__all__ = ["MAX_DEPTH", "check_record"]

#: the deepest nesting a record may have (a real one is under 8 levels deep)
MAX_DEPTH = 64
#: key endings that promise a number: the unit is in the name
UNIT_SUFFIXES = (
    "_bytes",
    "_seconds",
    "_percent",
    "_mhz",
    "_watts",
    "_celsius",
    "_cores",
    "_per_second",
    "_gflops",
)
#: keys that promise a text wherever they appear
TEXT_KEYS = frozenset(
    {"label", "name", "title", "severity", "rule", "hostname", "model", "kind", "status"}
)
_INT_LIMIT = 2**63  # what SQLite and most JSON readers hold exactly


@dataclass(frozen=True)
class _List:
    item: Spec


@dataclass(frozen=True)
class _Dict:
    """An object: ``keys`` have their own spec, other keys follow the document-wide rules."""

    keys: Mapping[str, Spec]
    #: when set, every value not in ``keys`` has this spec (``env``: text values)
    values: Spec | None = None
    #: unit-named keys hold one number or null here (a sample's readings), never a series
    scalar_units: bool = False


Spec = Union[str, _List, _Dict]  # noqa: UP007 (a runtime alias)

_GPU_SAMPLE = _Dict(
    {
        "index": "int",
        "sm_clock_mhz": "int?",
        "throttle_reasons": _List("text"),
        "process_memory_note": "text?",
    },
    scalar_units=True,
)
_SAMPLE = _Dict(
    {
        "t_seconds": "number",
        "cpu_per_core_percent": _List("number?"),
        "process_count": "int?",
        "process_threads": "int?",
        "gpus": _List(_GPU_SAMPLE),
        "tf_memory": _Dict({}, values=_Dict({}, values="number?")),
    },
    scalar_units=True,
)
_FINGERPRINT = _Dict(
    {
        "host": "object?",
        "cpu": _Dict(
            {
                "isa_flags": "object?",
                "affinity": "list?",
                "logical_cores": "int?",
                "physical_cores": "int?",
                **dict.fromkeys(("usable_cores", "frequency_mhz"), "number?"),
                "cgroup_cpu_quota_cores": "number?",
            }
        ),
        "memory": _Dict(
            dict.fromkeys(
                ("total_bytes", "available_bytes", "swap_total_bytes", "swap_used_bytes"),
                "number?",
            )
        ),
        "gpus": _List("object"),
        "gpus_pci": "list?",
        "tensorflow": "object?",
        "numpy": "object?",
        "blas": _List("object"),
        "env": _Dict({}, values="text?"),
        "load": "object?",
    }
)
RECORD = _Dict(
    {
        "kind": "text",
        "label": "text?",
        "id": "text",
        "version": "int",
        "tfres_version": "text?",
        "created_at": "text",
        "started_at": "text?",
        "ended_at": "text?",
        "elapsed_seconds": "number?",
        "command": "argv?",
        "status": "text",
        "exit_code": "int?",
        "signal": "text?",
        "end_reason": "text?",
        "job": "text?",
        "worker": "int?",
        "fingerprint": _FINGERPRINT,
        "interval_seconds": "number?",
        "samples": _List(_SAMPLE),
        "aggregates": _List(_Dict({"mean": "object?", "min": "object?", "max": "object?"})),
        "marks": _List(_Dict({"t_seconds": "number", "label": "text"})),
        "phases": _List(
            _Dict({"name": "text", "start_seconds": "number", "end_seconds": "number?"})
        ),
        "steps": _List("object"),
        "workloads": _List(_Dict({"details": "object?"})),
        "findings": _List(_Dict({"evidence": "any"})),
        "control": "object",
        "notes": _List("text"),
        "extra": "object",
    }
)
#: list and object fields of the record itself, where null reads as empty
_EMPTY_IF_NULL: dict[str, type] = {
    **dict.fromkeys(("fingerprint", "control", "extra"), dict),
    **dict.fromkeys(("samples", "aggregates", "marks", "phases", "steps"), list),
    **dict.fromkeys(("workloads", "findings", "notes"), list),
}


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    return -_INT_LIMIT < value < _INT_LIMIT


_SCALARS = {
    "text": lambda v: isinstance(v, str),
    "int": lambda v: isinstance(v, int) and _is_number(v),
    "number": _is_number,
    "bool": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "list": lambda v: isinstance(v, list),
    "argv": lambda v: isinstance(v, list) and all(isinstance(a, str) for a in v),
    "any": lambda v: True,
}
_WORDS = {
    "text": "text",
    "int": "a whole number",
    "number": "a finite number",
    "bool": "true or false",
    "object": "an object",
    "list": "a list",
    "argv": "a list of texts",
}


def _describe(value: Any) -> str:
    text = repr(value) if isinstance(value, (str, int, float, bool)) else type(value).__name__
    text = {"NoneType": "null", "dict": "an object", "list": "a list"}.get(text, text)
    return text if len(text) <= 40 else text[:37] + "..."


class _Checker:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, expected: str, value: Any) -> RecordError:
        return RecordError(
            f"{self.source} is a damaged tfres record ({path} should be {expected}, "
            f"got {_describe(value)}); re-run or pick another record"
        )

    def too_deep(self, path: str) -> RecordError:
        return RecordError(
            f"{self.source} nests deeper than {MAX_DEPTH} levels (at {path[:60]}); "
            "it is not a tfres record"
        )

    def check(self, value: Any, spec: Spec, path: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise self.too_deep(path)
        if isinstance(spec, str):
            self.scalar(value, spec, path, depth)
        elif isinstance(spec, _List):
            if not isinstance(value, list):
                raise self.fail(path, "a list", value)
            for i, item in enumerate(value):
                self.check(item, spec.item, f"{path}[{i}]", depth + 1)
        else:
            self.obj(value, spec, path, depth)

    def scalar(self, value: Any, spec: str, path: str, depth: int) -> None:
        kind, optional = spec.rstrip("?"), spec.endswith("?")
        if value is None and optional:
            return
        if not _SCALARS[kind](value):
            raise self.fail(path, _WORDS[kind] + (" or null" if optional else ""), value)
        if isinstance(value, (dict, list)):
            self.free(value, path, depth)

    def obj(self, value: Any, spec: _Dict, path: str, depth: int) -> None:
        if not isinstance(value, dict):
            raise self.fail(path, "an object", value)
        for key, item in value.items():
            where = f"{path}.{key}" if path else key
            if key in spec.keys:
                self.check(item, spec.keys[key], where, depth + 1)
            elif spec.values is not None:
                self.check(item, spec.values, where, depth + 1)
            elif spec.scalar_units and key.endswith(UNIT_SUFFIXES):
                self.scalar(item, "number?", where, depth + 1)
            else:
                self.rule(key, item, where, depth + 1)

    def rule(self, key: str, value: Any, path: str, depth: int) -> None:
        """The document-wide rules for a key no spec names."""
        if key.endswith(UNIT_SUFFIXES):
            # a number; or a series (epoch_seconds) or one per device (tf_peak_bytes) of them
            items = value if isinstance(value, list) else [value]
            if isinstance(value, dict):
                items = list(value.values())
            for item in items:
                if item is not None and not _is_number(item):
                    raise self.fail(path, "a number, or a list or object of numbers", value)
        elif key in TEXT_KEYS:
            if value is not None and not isinstance(value, str):
                raise self.fail(path, "text or null", value)
        elif isinstance(value, (dict, list)):
            self.free(value, path, depth)
        elif isinstance(value, float) and not math.isfinite(value):
            raise self.fail(path, "a finite number", value)

    def free(self, value: dict[str, Any] | list[Any], path: str, depth: int) -> None:
        """A value no spec describes: only the document-wide rules and the depth apply."""
        if depth > MAX_DEPTH:
            raise self.too_deep(path)
        if isinstance(value, dict):
            self.obj(value, _Dict({}), path, depth)
            return
        for i, item in enumerate(value):
            where = f"{path}[{i}]"
            if isinstance(item, (dict, list)):
                self.free(item, where, depth + 1)
            elif isinstance(item, float) and not math.isfinite(item):
                raise self.fail(where, "a finite number", item)


def check_record(data: dict[str, Any], *, source: str = "record") -> dict[str, Any]:
    """``data`` (a parsed record) with null list/object fields made empty, or RecordError.

    Raises :class:`~tfres.errors.RecordError` naming ``source``, the field and its value
    when a field has the wrong type, a number is not finite, or the document nests too deep.
    """
    data = {
        k: _EMPTY_IF_NULL[k]() if v is None and k in _EMPTY_IF_NULL else v for k, v in data.items()
    }
    _Checker(source).obj(data, RECORD, "", 0)
    return data
