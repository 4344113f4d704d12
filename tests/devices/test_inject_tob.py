"""Keras's own Python around a ``train_on_batch`` loop's step (`_tfres_tob`): each call's time
less its function's, the same calls back to back at exit on real Keras, and what a step's
input gains from the difference."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from tfres.devices.inject import _tfres_loopalone, _tfres_tob

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")


@pytest.fixture(autouse=True)
def _no_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_tfres_tob, "RUNS", {})


def _stats(steps: list[tuple], keras_times: list[float] | None = None) -> SimpleNamespace:
    """A loop's ``_LoopStats`` as far as this module reads it: its steps ``(begin, step, wait,
    call, ...)``, the end of its last call, and its function alone."""
    alone = SimpleNamespace(keras_call=None, keras_times=keras_times)
    last_end = steps[-1][0] + steps[-1][1] if steps else None
    return SimpleNamespace(steps=steps, last_end=last_end, alone=alone)


def test_a_calls_keras_python_is_its_time_less_the_function_that_ended_inside_it() -> None:
    other = _stats([(0.0, 0.5, None, 0.4)])  # a function that ended before the call
    loop = _stats([(0.0, 1.0, None, 0.006), (1.0, 0.010, None, 0.006)])  # ends at 1.010
    _tfres_tob.called([other, loop], "model", 1.002, 1.0105, ("x", "y"), {})
    assert _tfres_tob.RUNS[id(loop)] == [(1, pytest.approx(0.0085 - 0.006))]
    assert id(other) not in _tfres_tob.RUNS
    # its arguments kept for the window's call (the loop's alone), once
    assert loop.alone.keras_call == ("model", ("x", "y"), {})
    _tfres_tob.called([loop], "model", 1.002, 1.0105, ("x2", "y2"), {})
    assert loop.alone.keras_call == ("model", ("x", "y"), {})
    # a call in which no loop's function ended (the first, tracing before it was timed)
    _tfres_tob.called([loop], "model", 5.0, 5.1, (), {})
    assert len(_tfres_tob.RUNS[id(loop)]) == 2


def test_a_steps_extra_is_keras_python_in_unsampled_steps_above_its_level_alone() -> None:
    # steps 0-9; 3-5 sampled (a wait), the rest not; the window starts at step 2
    steps = [(i * 0.01, 0.01, 0.004 if 3 <= i <= 5 else None, 0.005) for i in range(10)]
    loop = _stats(steps, keras_times=[0.0005, 0.0004, 0.0006])
    keras_python = [0.009, 0.009, 0.0009, 0.002, 0.002, 0.002, 0.0008, 0.0009, 0.0010, 0.0007]
    _tfres_tob.RUNS[id(loop)] = list(enumerate(keras_python))
    # steps 2 and 6-9 (0.9, 0.8, 0.9, 1.0, 0.7 ms): median 0.9 ms, less 0.5 ms alone
    assert _tfres_tob.extra_seconds(loop, (2, 5)) == pytest.approx(0.0004)
    assert _tfres_tob.fields(loop, (2, 5)) == {
        "keras_python_alone_seconds": [0.0005, 0.0004, 0.0006],
        "keras_python_seconds": 0.0009,
    }
    assert _tfres_tob.extra_seconds(loop, (2, 5), python=False) == 0.0  # over tf.data
    # faster than alone: nothing
    loop.alone.keras_times = [0.002]
    assert _tfres_tob.extra_seconds(loop, (2, 5)) == 0.0
    # not timed at exit, or no call timed in the run: nothing
    loop.alone.keras_times = None
    assert _tfres_tob.extra_seconds(loop, (2, 5)) == 0.0
    assert _tfres_tob.extra_seconds(_stats(steps, [0.0005]), (2, 5)) == 0.0
    assert _tfres_tob.fields(loop, (2, 5)) == {}


def test_the_extra_joins_a_timed_wait_up_to_its_step() -> None:
    assert _tfres_tob.with_keras(0.004, 0.010, 0.0005) == pytest.approx(0.0045)
    assert _tfres_tob.with_keras(0.0098, 0.010, 0.0005) == 0.010
    assert _tfres_tob.with_keras(None, 0.010, 0.0005) is None  # the gap not timed


def _model() -> Any:
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(3)]
    )
    model.compile(
        "adam",
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


def _train_function(model: Any, x: Any, y: Any) -> tuple[Any, Any, tuple, dict]:
    """The tf.function ``train_on_batch`` calls, its class's ``__call__``, and the arguments
    of one call, seen by wrapping that ``__call__`` for one ``train_on_batch``."""
    from tensorflow.python.eager.polymorphic_function import polymorphic_function as pf

    call, seen = pf.Function.__call__, []

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append((self, args, kwargs))
        return call(self, *args, **kwargs)

    pf.Function.__call__ = spy
    try:
        model.train_on_batch(x, y)
    finally:
        pf.Function.__call__ = call
    function, args, kwargs = seen[-1]
    return function, call, args, kwargs


def test_keras_python_alone_takes_each_calls_function_out_and_puts_the_hook_back() -> None:
    model = _model()
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(16, 8)).astype("float32"), rng.integers(0, 3, 16)
    function, call, _, _ = _train_function(model, x, y)
    cls = type(function)
    hooked = cls.__dict__["__call__"]
    counted = []

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        counted.append(1)
        return call(self, *args, **kwargs)

    times = _tfres_tob.keras_python_alone((model, (x, y), {}), counting, function, 0.05)
    assert _tfres_tob.MIN_CALLS <= len(times) <= _tfres_tob.MAX_CALLS
    assert len(counted) == len(times) + 1  # each call's function, and the warm-up's
    assert all(0 <= t < 0.5 for t in times)
    assert cls.__dict__["__call__"] is hooked  # the class's own __call__ is back


def test_the_loop_alone_times_keras_python_and_leaves_every_variable_as_it_was() -> None:
    model = _model()
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(16, 8)).astype("float32"), rng.integers(0, 3, 16)
    function, call, args, kwargs = _train_function(model, x, y)
    variables = function.get_concrete_function(*args, **kwargs).variables
    before = [v.numpy().copy() for v in variables]
    notes: list[str] = []
    alone = _tfres_loopalone.LoopCallAlone(function, call, args, kwargs, notes.append)
    alone.keras_call = (model, (x, y), {})
    assert alone.measure(0.2) is not None
    assert alone.keras_times and len(alone.keras_times) >= _tfres_tob.MIN_CALLS
    assert alone.keras_call is None  # the batch let go
    for v, value in zip(variables, before, strict=True):
        np.testing.assert_array_equal(v.numpy(), value)
    assert notes == []
