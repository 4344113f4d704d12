"""A custom loop's hot function alone (`_tfres_loopalone`) on real TensorFlow: timed on one
of its calls' arguments (or a cached batch of the iterator it reads), every variable left as
it was; and what the process ran beside a call above it."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from keras_data import classification_batches
from tfres.devices.inject import _tfres_alone, _tfres_cached, _tfres_loopalone

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")


def _model() -> Any:
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(3)]
    )
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def _loop_step() -> tuple[Any, Any, Any]:
    """A custom loop's train step (Keras model, optimizer, metric) and one batch."""
    model = _model()
    optimizer = keras.optimizers.Adam(1e-2)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    metric = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(x: Any, y: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        metric.update_state(y, model(x, training=False))
        return loss

    x, y = next(iter(classification_batches()))
    for _ in range(3):
        train_step(x, y)
    return train_step, x, y


def test_a_loops_call_alone_is_timed_and_leaves_every_variable_as_it_was() -> None:
    train_step, x, y = _loop_step()
    variables = train_step.get_concrete_function(x, y).variables
    assert len(variables) > 8  # the model's, the optimizer's slots and count, the metric's
    before = [v.numpy().copy() for v in variables]
    notes: list[str] = []
    alone = _tfres_loopalone.LoopCallAlone(
        train_step, type(train_step).__call__, (x, y), {}, notes.append
    )
    times = alone.measure(0.5)
    assert (
        times is not None
        and _tfres_alone.MIN_CALLS <= len(times) <= _tfres_alone.MAX_CALLS
        and all(t > 0 for t in times)
    )
    # the process's CPU in a call: more than nothing, less than all cores for all of it
    assert alone.cpu_seconds is not None
    assert 0 < alone.cpu_seconds <= 1.5 * max(times) * (os.cpu_count() or 1)
    for v, value in zip(variables, before, strict=True):
        np.testing.assert_array_equal(v.numpy(), value)
    assert notes == []
    assert alone.measure(0.5) is None  # once: the arguments were let go


def test_a_loop_whose_function_reads_its_own_iterator_is_timed_on_a_cached_batch() -> None:
    """``next(iterator)`` inside the function: timed as it was, the call alone would read
    the user's pipeline (a ``py_function`` counting its batches here) and carry its cost."""
    from tensorflow.python.data.ops import iterator_ops

    _tfres_cached.track(iterator_ops.OwnedIterator)
    read = [0]

    def count(x: Any) -> Any:
        read[0] += 1
        return x

    data = classification_batches().map(lambda x, y: (tf.py_function(count, [x], tf.float32), y))
    data = data.map(lambda x, y: (tf.ensure_shape(x, (None, 8)), y))
    iterator = iter(data)
    model = _model()

    @tf.function
    def train_epoch() -> Any:
        total = tf.constant(0.0)
        for _ in tf.range(5):
            x, y = next(iterator)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True)))
            grads = tape.gradient(loss, model.trainable_variables)
            model.optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            total += loss
        return total

    train_epoch()
    variables = train_epoch.get_concrete_function().variables
    before = [v.numpy().copy() for v in variables]
    notes: list[str] = []
    alone = _tfres_loopalone.LoopCallAlone(
        train_epoch, type(train_epoch).__call__, (), {}, notes.append
    )
    read_before = read[0]
    times = alone.measure(0.2, gap_seconds=0.004)
    assert times is not None and len(times) >= _tfres_alone.MIN_CALLS and notes == []
    assert alone.reads_input
    assert alone.after_gap_times == []  # its gaps make no batch: no call after a gap is timed
    # one batch taken from the iterator at set-up, and what its prefetch pulled: not 5 a call
    assert read[0] - read_before < 5 * len(times)
    for v, value in zip(variables, before, strict=True):
        np.testing.assert_array_equal(v.numpy(), value)


def test_a_loop_handed_an_object_it_cannot_call_again_on_is_not_timed() -> None:
    class Batches:  # a user's own class: what calling again would read is unknown
        pass

    notes: list[str] = []

    @tf.function
    def train_step(batches: Any) -> Any:
        return tf.constant(1.0)

    alone = _tfres_loopalone.LoopCallAlone(
        train_step, type(train_step).__call__, (Batches(),), {}, notes.append
    )
    assert alone.measure(0.5) is None
    assert len(notes) == 1 and "an argument is a Batches" in notes[0]


def test_a_loop_whose_calls_are_long_is_not_timed_at_exit() -> None:
    train_step, x, y = _loop_step()
    notes: list[str] = []
    alone = _tfres_loopalone.LoopCallAlone(
        train_step, type(train_step).__call__, (x, y), {}, notes.append
    )
    # a call of 6 s (a whole epoch a call) is timed once after a warm-up: 12 s, past the limit
    assert alone.measure(0.5, [6.0, 6.1, 5.9]) is None
    assert len(notes) == 1 and "a call takes 6.0 s" in notes[0] and "2 calls" in notes[0]


def test_a_loop_whose_calls_take_seconds_is_timed_once_after_its_warm_up() -> None:
    # 4 s a call: three calls and a warm-up (16 s) would pass the limit, one and a warm-up not
    train_step, x, y = _loop_step()
    notes: list[str] = []
    alone = _tfres_loopalone.LoopCallAlone(
        train_step, type(train_step).__call__, (x, y), {}, notes.append
    )
    assert alone.measure(0.5, [4.0, 4.1, 3.9]) is not None and notes == []


def test_a_loop_calls_native_pipeline_work_is_the_processs_cpu_above_the_call_alone() -> None:
    # 42 ms of the process's CPU during a call whose function alone takes 30 ms of CPU
    assert _tfres_loopalone.native_beside(0.042, 0.030) == pytest.approx(0.012)
    assert _tfres_loopalone.native_beside(0.025, 0.030) == 0.0  # less than alone: nothing beside it
    assert _tfres_loopalone.native_beside(0.042, None) == 0.0  # the call alone was not timed


def test_a_loop_fed_from_python_also_times_its_call_after_an_idle_gap() -> None:
    train_step, x, y = _loop_step()
    alone = _tfres_loopalone.LoopCallAlone(
        train_step, type(train_step).__call__, (x, y), {}, lambda _: None
    )
    assert alone.measure(0.3, gap_seconds=0.004, busy_share=0.75) is not None
    assert len(alone.after_gap_times) == _tfres_loopalone.GAP_CALLS
    assert alone.after_gap_busy_share == 0.75
    assert all(t > 0 for t in alone.after_gap_times)
    # gaps under a millisecond (or none: a loop over tf.data): no call after a gap
    for gap in (0.0002, None):
        alone = _tfres_loopalone.LoopCallAlone(
            train_step, type(train_step).__call__, (x, y), {}, lambda _: None
        )
        assert alone.measure(0.3, gap_seconds=gap) is not None
        assert alone.after_gap_times == []


def test_calls_after_idle_gaps_sleep_the_gap_before_each_call() -> None:
    import time

    stamps: list[float] = []
    times = _tfres_loopalone.after_idle_gaps(
        lambda: stamps.append(time.perf_counter()), 0.01, calls=3
    )
    assert len(times) == 3 and all(t >= 0 for t in times)
    assert all(b - a >= 0.01 for a, b in zip(stamps, stamps[1:], strict=False))


def test_a_gap_spends_its_busy_share_on_the_cpu_and_the_rest_asleep() -> None:
    import time

    def cpu_in_gaps(share: float) -> tuple[float, float]:
        cpu, wall = time.thread_time(), time.perf_counter()
        _tfres_loopalone.after_idle_gaps(lambda: None, 0.02, share, calls=3)
        return time.thread_time() - cpu, time.perf_counter() - wall

    busy_cpu, busy_wall = cpu_in_gaps(1.0)
    idle_cpu, idle_wall = cpu_in_gaps(0.0)
    half_cpu, _ = cpu_in_gaps(0.5)
    assert busy_wall >= 0.06 and idle_wall >= 0.06  # three gaps of 20 ms either way
    # on the CPU: the thread's own CPU time is the gaps' (less what the OS took from it)
    assert busy_cpu >= 0.6 * 0.06 and idle_cpu < 0.01
    assert 0.3 * 0.03 <= half_cpu <= 0.03 + 0.01


def test_a_loops_busy_share_is_its_threads_cpu_in_its_typical_gap() -> None:
    import time
    from types import SimpleNamespace

    def gap(busy_seconds: float, asleep_seconds: float) -> None:
        _tfres_loopalone.gap_began(stats)
        time.sleep(asleep_seconds)  # a read from a queue: asleep
        until = time.perf_counter() + busy_seconds
        while time.perf_counter() < until:  # a parser: on the CPU
            pass
        _tfres_loopalone.gap_ended(stats)

    stats = SimpleNamespace(gap_cpu=_tfres_loopalone.GapCpu(), steps=[None] * 5)  # 5 kept
    _tfres_loopalone.gap_ended(stats)  # before the first call's end: nothing to count
    assert _tfres_loopalone.busy_share(stats) == 0.0
    gap(0.0, 0.02)
    assert _tfres_loopalone.busy_share(stats) < 0.2
    for _ in range(3):  # three gaps busy for 3/4 of their time
        gap(0.015, 0.005)
    gap(0.0, 0.2)  # a long pause (a read of the next shard): not the typical gap
    assert 0.45 <= _tfres_loopalone.busy_share(stats) <= 0.8
    assert len(stats.gap_cpu.shares) == 5
    gap(0.0, 0.001)  # past the steps kept: no share kept either
    assert len(stats.gap_cpu.shares) == 5
    _tfres_loopalone.gap_ended(None)  # a loop's first call: no stats yet


def test_the_gap_of_a_loop_fed_from_python_is_its_steps_time_outside_the_call() -> None:
    from types import SimpleNamespace

    def loop(steps: list[tuple], **kinds: bool) -> Any:
        return SimpleNamespace(
            steps=steps, eager=kinds.get("eager", False), inside=kinds.get("inside", False)
        )

    # (begin, duration, wait, call, from_tf_data, ...): the first step (tracing) left out
    steps = [(0.0, 0.9, None, 0.8, False), (1, 0.050, 0, 0.036, False)]
    steps += [(2, 0.060, 0, 0.036, False), (3, 0.055, 0, 0.036, False)]
    assert _tfres_loopalone.python_gap_seconds(loop(steps)) == pytest.approx(0.019)
    # steps that read tf.data, eager loops and loops inside their function: no gap to time
    assert _tfres_loopalone.python_gap_seconds(loop([s[:4] + (True,) for s in steps])) is None
    assert _tfres_loopalone.python_gap_seconds(loop(steps, eager=True)) is None
    assert _tfres_loopalone.python_gap_seconds(loop(steps, inside=True)) is None


def test_resuming_after_a_gap_costs_the_calls_after_it_above_the_calls_back_to_back() -> None:
    from types import SimpleNamespace

    alone = SimpleNamespace(after_gap_times=[0.007, 0.008, 0.009])
    assert _tfres_loopalone.resume_seconds(alone, 0.005) == pytest.approx(0.003)
    assert _tfres_loopalone.resume_seconds(alone, 0.010) == 0.0  # never below nothing
    assert _tfres_loopalone.resume_seconds(SimpleNamespace(after_gap_times=[]), 0.005) == 0.0
    assert _tfres_loopalone.resume_seconds(None, 0.005) == 0.0
    assert _tfres_loopalone.resume_seconds(alone, None) == 0.0
    assert _tfres_loopalone.after_gap_fields(SimpleNamespace(after_gap_times=[])) == {}
    timed = SimpleNamespace(after_gap_times=[0.0071234567891], after_gap_busy_share=0.912345)
    assert _tfres_loopalone.after_gap_fields(timed) == {
        "after_gap_calls_seconds": [0.007123457],
        "after_gap_busy_share": 0.9123,
    }
