"""Functions named on the command line: ``"path/to/script.py:name"`` or ``"pkg.module:name"``.

fn = load_callable("model.py:predict")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["check_reference", "load_callable"]


def _split_reference(ref: str) -> tuple[str, str, bool]:
    """``(where, name, is_script)`` of ``"script.py:name"``/``"module:name"``; checks the form
    and that a script exists, without importing anything."""
    from pathlib import Path

    text = str(ref).strip()
    where, sep, name = text.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise ValueError(
            f"cannot read {ref!r}; write it like 'train.py:predict' or 'mypkg.model:predict'"
        )
    is_script = where.endswith(".py") or "/" in where or Path(where).exists()
    if is_script and not Path(where).is_file():
        raise ValueError(f"script {where!r} (from {ref!r}) does not exist")
    return where, name, is_script


def check_reference(ref: str) -> None:
    """Raise ``ValueError`` now if ``ref`` cannot name a function (before a slow import)."""
    _split_reference(ref)


def load_callable(ref: str) -> Callable[..., Any]:
    """Load ``"path/to/script.py:function"`` or ``"package.module:function"``.

    A script is loaded under a name of its own (not ``__main__``), so its
    ``if __name__ == "__main__":`` block does not run.

    Raises ``ValueError`` naming the reference when it cannot be found.
    """
    import importlib
    import importlib.util
    import sys
    from pathlib import Path

    where, name, is_script = _split_reference(ref)
    if is_script:
        path = Path(where)
        module_name = f"_tfres_user_{abs(hash(str(path.resolve())))}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ValueError(f"cannot load {where!r} as a Python script")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        # as `python script.py` does, the script's folder stays importable: a function
        # that imports a sibling module when it is called must find it then too
        folder = str(path.resolve().parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as err:
            raise ValueError(f"cannot import module {where!r} (from {ref!r}): {err}") from err
    obj = getattr(module, name, None)
    if obj is None:
        raise ValueError(f"{where!r} has no {name!r} (from {ref!r})")
    if not callable(obj):
        raise ValueError(f"{ref!r} is a {type(obj).__name__}, not a function")
    return obj
