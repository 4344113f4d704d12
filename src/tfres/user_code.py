"""Functions named on the command line: ``"path/to/script.py:name"`` or ``"pkg.module:name"``.

fn = load_callable("model.py:predict")
"""

from __future__ import annotations

import ast
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfres.errors import TfresError

__all__ = ["UserCodeError", "check_reference", "load_callable"]


class UserCodeError(TfresError):
    """The user's script or module failed to compile or to import; names the file and line."""


def _syntax_error(err: SyntaxError, ref: str) -> UserCodeError:
    where = f"{err.filename or ref}, line {err.lineno}" if err.lineno else (err.filename or ref)
    return UserCodeError(
        f"{where}: {type(err).__name__}: {err.msg} (from {ref!r}); fix the script and try again"
    )


def _import_error(err: BaseException, ref: str, file: str | None) -> UserCodeError:
    """The exception ``err`` raised while importing, at the deepest line of the user's file."""
    frames = traceback.extract_tb(err.__traceback__)
    ours = [f for f in frames if file is not None and Path(f.filename) == Path(file)]
    chosen = ours or list(frames)
    where = f"{chosen[-1].filename}, line {chosen[-1].lineno}" if chosen else ref
    text = str(err).splitlines()[0] if str(err) else ""
    detail = f"{type(err).__name__}: {text}" if text else type(err).__name__
    return UserCodeError(
        f"{where}: {detail} (while importing {ref!r}); fix the script and try again"
    )


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
    """Raise now if ``ref`` cannot name a function, before a slow import.

    ``ValueError`` for a reference that is malformed or names no file;
    :class:`UserCodeError` naming the file and line when the script does not compile.
    Nothing is imported or run.
    """
    where, _, is_script = _split_reference(ref)
    if is_script:
        _compile_script(Path(where), ref)


def _compile_script(path: Path, ref: str) -> None:
    try:
        source = path.read_bytes()
    except OSError as err:
        raise ValueError(
            f"script {str(path)!r} (from {ref!r}) cannot be read: {err.strerror}"
        ) from None
    try:
        compile(source, str(path), "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as err:
        raise _syntax_error(err, ref) from None
    except ValueError as err:  # null bytes
        raise UserCodeError(f"{path}: {err} (from {ref!r}); is it a Python script?") from None


def load_callable(ref: str) -> Callable[..., Any]:
    """Load ``"path/to/script.py:function"`` or ``"package.module:function"``.

    A script is loaded under a name of its own (not ``__main__``), so its
    ``if __name__ == "__main__":`` block does not run.

    Raises ``ValueError`` naming the reference when it cannot be found, and
    :class:`UserCodeError` naming the file and line when importing it fails (a syntax
    error, or any exception its top level raises).
    """
    import importlib
    import importlib.util
    import sys

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
        try:
            spec.loader.exec_module(module)
        except SyntaxError as err:
            del sys.modules[module_name]
            raise _syntax_error(err, ref) from None
        except Exception as err:
            del sys.modules[module_name]
            raise _import_error(err, ref, str(path)) from err
    else:
        try:
            module = importlib.import_module(where)
        except ModuleNotFoundError as err:
            if err.name is not None and where.startswith(err.name):
                raise ValueError(f"cannot import module {where!r} (from {ref!r}): {err}") from err
            raise _import_error(err, ref, None) from err
        except SyntaxError as err:
            raise _syntax_error(err, ref) from None
        except Exception as err:
            frames = traceback.extract_tb(err.__traceback__)
            raise _import_error(err, ref, frames[-1].filename if frames else None) from err
    obj = getattr(module, name, None)
    if obj is None:
        raise ValueError(f"{where!r} has no {name!r} (from {ref!r})")
    if not callable(obj):
        raise ValueError(f"{ref!r} is a {type(obj).__name__}, not a function")
    return obj
