"""What ``tfres placement`` times: a function named ``script.py:function`` and its example
arguments, loaded after TensorFlow is ready.

    fn, example = load_target("model.py:predict", args_ref="model.py:example_batch")
    advice = advise_placement(fn, *example)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tfres.backends.tf_config import tensorflow
from tfres.backends.tf_placement import ensure_logical_cpus
from tfres.user_code import UserCodeError, check_reference, load_callable

__all__ = ["load_target"]


def load_target(
    function_ref: str, *, args_ref: str | None = None, logical_cpus: int | None = None
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``(fn, example_args)`` of the references, checked before the slow TensorFlow import.

    TensorFlow is imported first (its start-up chatter quieted), then the CPU is split into
    ``logical_cpus`` devices, before the script is imported: a script that builds tensors
    starts the runtime. ``args_ref`` names a function returning the example arguments (one
    value or a tuple/list of them); with None the function is called with none.
    """
    check_reference(function_ref)  # a typo is reported before the 3-second TensorFlow import
    if args_ref is not None:
        check_reference(args_ref)
    tensorflow("placement advice")
    if logical_cpus is not None:
        ensure_logical_cpus(logical_cpus)
    return load_callable(function_ref), _example_args(args_ref)


def _example_args(ref: str | None) -> tuple[Any, ...]:
    if ref is None:
        return ()
    make = load_callable(ref)
    try:
        value = make()
    except Exception as err:
        raise UserCodeError(
            f"--args {ref} raised {type(err).__name__}: {err}; fix it and try again"
        ) from err
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)
