"""The cached-batch step (`_tfres_alone`) on real Keras: it times the user's step alone and
leaves the training exactly as it would have been; and how the trace reader uses the timing."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from keras_data import classification_batches
from tfres.devices.inject import _tfres_alone, _tfres_window, _tfres_xplane

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")


def _model(seed: int = 0) -> Any:
    keras.utils.set_random_seed(seed)
    model = keras.Sequential(
        [
            keras.Input((8,)),
            keras.layers.Dense(16, activation="relu"),
            keras.layers.Dropout(0.3, seed=1),
            keras.layers.BatchNormalization(),
            keras.layers.Dense(3),
        ]
    )
    model.compile(
        "adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"]
    )
    return model


def _state(model: Any) -> list[np.ndarray]:
    return [v.numpy() for v in _tfres_alone._state_variables(model)]


class _ArmAt(keras.callbacks.Callback):
    def __init__(self, alone: _tfres_alone.StepAlone, step: int) -> None:
        super().__init__()
        self.alone, self.step = alone, step

    def on_train_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        if batch == self.step:
            self.alone.arm(self.model)


def _fit(alone: _tfres_alone.StepAlone | None, steps_per_execution: int = 1) -> Any:
    model = _model()
    model.steps_per_execution = steps_per_execution
    callbacks = [_ArmAt(alone, 2)] if alone is not None else []
    history = model.fit(
        classification_batches(), steps_per_epoch=8, epochs=2, verbose=0, callbacks=callbacks
    )
    return model, history


@pytest.mark.parametrize("steps_per_execution", [1, 2])
def test_the_captured_step_and_its_timing_leave_training_as_it_was(
    steps_per_execution: int,
) -> None:
    notes: list[str] = []
    alone = _tfres_alone.StepAlone(notes.append)
    plain, plain_history = _fit(None, steps_per_execution)
    timed, timed_history = _fit(alone, steps_per_execution)
    assert alone.state == "captured", notes
    after_fit = _state(timed)
    times = alone.measure(_tfres_xplane.CALL_MARKER, 1.0)
    assert alone.state == "measured" and notes == []
    assert times and all(0 < t < 5 for t in times)
    assert _tfres_alone.MIN_CALLS <= len(alone.plain_times) <= _tfres_alone.MAX_CALLS and all(
        0 < t < 5 for t in alone.plain_times
    )
    # the same batches in the same order, and every variable put back after the timing
    assert plain_history.history["loss"] == timed_history.history["loss"]
    for before, now, reference in zip(after_fit, _state(timed), _state(plain), strict=True):
        np.testing.assert_array_equal(before, now)
        np.testing.assert_array_equal(reference, now)


def test_the_function_is_not_traced_again() -> None:
    traces: list[str] = []

    class Counted(keras.Sequential):
        def train_step(self, data: Any) -> Any:
            traces.append(self.name)
            return super().train_step(data)

    def fit(name: str, alone: _tfres_alone.StepAlone | None) -> Any:
        model = Counted([keras.Input((8,)), keras.layers.Dense(3)], name=name)
        model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        callbacks = [_ArmAt(alone, 1)] if alone is not None else []
        model.fit(classification_batches(), steps_per_epoch=5, verbose=0, callbacks=callbacks)

    alone = _tfres_alone.StepAlone(lambda text: None)
    fit("plain", None)
    fit("lends", alone)
    assert alone.state == "captured"
    assert traces.count("lends") == traces.count("plain")  # the lending step: no new trace
    assert alone.measure(_tfres_xplane.CALL_MARKER, 1.0)
    assert traces.count("lends") == traces.count("plain")  # nor the calls alone


def _ragged_data() -> Any:
    """Sequences of 2-12 ids, padded per batch to the longest: batches of different lengths."""
    rng = np.random.default_rng(1)
    rows = [rng.integers(1, 50, rng.integers(2, 13)).astype("int32") for _ in range(96)]
    labels = rng.integers(0, 2, 96).astype("int32")
    ds = tf.data.Dataset.from_generator(
        lambda: zip(rows, labels, strict=True),
        output_signature=(tf.TensorSpec((None,), tf.int32), tf.TensorSpec((), tf.int32)),
    )
    return ds.padded_batch(4).repeat()


def _sequence_model(traces: list[int]) -> Any:
    class Counted(keras.Sequential):
        def train_step(self, data: Any) -> Any:
            traces.append(1)
            return super().train_step(data)

    keras.utils.set_random_seed(0)
    model = Counted(
        [
            keras.Input((None,), dtype="int32"),
            keras.layers.Embedding(50, 8),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(2),
        ]
    )
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


class _ArmFrom(keras.callbacks.Callback):
    """Arms the step alone at each step the window would lend from (window at step 5)."""

    def __init__(self, alone: _tfres_alone.StepAlone) -> None:
        super().__init__()
        self.alone = alone

    def on_train_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        lending = _tfres_window.lending_steps(5, 24)
        if batch in lending:
            self.alone.arm(self.model, only_open=batch != lending[-1])


def test_batches_whose_length_varies_lend_from_several_steps_and_train_as_they_were() -> None:
    def fit(alone: _tfres_alone.StepAlone | None, traces: list[int]) -> Any:
        model = _sequence_model(traces)
        callbacks = [_ArmFrom(alone)] if alone is not None else []
        return model.fit(
            _ragged_data(), steps_per_epoch=10, epochs=2, verbose=0, callbacks=callbacks
        )

    notes: list[str] = []
    alone = _tfres_alone.StepAlone(notes.append)
    plain_traces: list[int] = []
    lent_traces: list[int] = []
    plain = fit(None, plain_traces)
    lent = fit(alone, lent_traces)
    assert len(lent_traces) == len(plain_traces)  # the lending steps: no new trace
    assert alone.state == "captured", notes
    assert len(alone.lent) == _tfres_alone.LENT_STEPS == 3
    assert alone.cached is None  # one dataset of all the lent batches, built after the fit
    lengths = {int(group[0][0].shape[1]) for group in alone.lent}
    assert len(lengths) > 1  # the lent batches are not all one length
    assert plain.history["loss"] == lent.history["loss"]  # the same batches, in order
    times = alone.measure(_tfres_xplane.CALL_MARKER, 1.0)
    assert times and notes == []
    assert len(lent_traces) == len(plain_traces)  # nor the calls alone
    # each lent batch as many times, plain and profiled
    assert len(times) % 3 == 0 and len(alone.plain_times) % 3 == 0


def test_batches_of_one_shape_lend_from_the_step_before_the_window_alone() -> None:
    alone = _tfres_alone.StepAlone(lambda text: None)
    model = _model()
    model.fit(
        classification_batches(),
        steps_per_epoch=8,
        epochs=1,
        verbose=0,
        callbacks=[_ArmFrom(alone)],
    )
    assert alone.state == "captured" and len(alone.lent) == 1
    # step 4's batch (the fifth of 16 rows): classification_batches() is not shuffled
    x = np.random.default_rng(0).normal(size=(160, 8)).astype("float32")
    np.testing.assert_array_equal(alone.lent[0][0][0].numpy(), x[64:80])
    assert alone.measure(_tfres_xplane.CALL_MARKER, 1.0)


def test_a_spec_is_open_past_the_batch_only_where_a_later_dimension_is_unknown() -> None:
    open_past = _tfres_alone._open_past_batch
    assert not open_past((tf.TensorSpec((None, 8)), tf.TensorSpec((None,), tf.int32)))
    assert open_past((tf.TensorSpec((None, None)), tf.TensorSpec((None,), tf.int32)))
    assert open_past({"ids": tf.TensorSpec((16, None, 4))})
    assert open_past(tf.TensorSpec(None))  # unknown rank
    assert not open_past(None)


def test_the_calls_alone_are_a_whole_number_of_cycles_over_the_lent_batches() -> None:
    cpu: list[float] = []
    # a call that takes no time: the budget never stops them before MAX_CALLS
    assert len(_tfres_alone.timed_calls(lambda: None, 0.0, cpu, cycle=3)) == 3
    assert len(_tfres_alone.timed_calls(lambda: None, 0.0, cpu, cycle=4)) == 4
    many = _tfres_alone.timed_calls(lambda: None, 10.0, cpu, cycle=3)
    assert len(many) % 3 == 0 and _tfres_alone.MAX_CALLS <= len(many) < _tfres_alone.MAX_CALLS + 3


@pytest.mark.parametrize(
    ("call_seconds", "calls"), [(0.001, 3), (0.2, 3), (0.25, 2), (0.3, 2), (0.6, 1), (3.5, 1)]
)
def test_long_calls_alone_are_timed_fewer_times_than_the_minimum(
    monkeypatch: pytest.MonkeyPatch, call_seconds: float, calls: int
) -> None:
    # a clock that each call moves on by call_seconds: three calls, or as many as run half a
    # second, whichever is fewer (at least one), when the budget holds no more
    now = [0.0]
    monkeypatch.setattr(_tfres_alone, "_clock", lambda: now[0])

    def call() -> None:
        now[0] += call_seconds

    cpu: list[float] = []
    times = _tfres_alone.timed_calls(call, 0.0, cpu)
    assert len(times) == len(cpu) == calls == _tfres_alone.least_calls(call_seconds)
    assert times == pytest.approx([call_seconds] * calls)
    # a whole number of cycles all the same: one long call per lent batch
    assert len(_tfres_alone.timed_calls(call, 0.0, cpu, cycle=2)) == -(-calls // 2) * 2


def test_a_distribution_strategy_or_a_big_model_is_a_note_not_a_timing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    notes: list[str] = []
    alone = _tfres_alone.StepAlone(notes.append)
    monkeypatch.setattr(_tfres_alone, "MAX_COPY_BYTES", 16)
    model, _ = _fit(alone)
    assert alone.measure(_tfres_xplane.CALL_MARKER, 1.0) is None and alone.state == "skipped"
    assert "above 0 MiB" in notes[0]

    class TwoReplicas:
        num_replicas_in_sync = 2

    other = _tfres_alone.StepAlone(notes.append)
    monkeypatch.setattr(type(model), "distribute_strategy", TwoReplicas(), raising=False)
    other.arm(model)
    assert other.state == "skipped" and "distribution strategy" in notes[-1]


def _step(
    duration: float,
    inputs: float,
    compute: float,
    running: float,
    *,
    blocked: float = 0.0,
    pipeline: float = 0.0,
) -> dict[str, Any]:
    return {
        "kind": "fit",
        "step": 0,
        "duration_seconds": duration,
        "input_seconds": inputs,
        "compute_seconds": compute,
        "other_seconds": duration - inputs - compute,
        "running_seconds": running,
        "blocked_seconds": blocked,
        "gil_seconds": 0.0,
        "pipeline_seconds": pipeline,
    }


def test_a_step_beside_a_working_pipeline_counts_what_it_ran_above_the_call_alone() -> None:
    # no wait, the pipeline's threads busy for 6 of 10 s: running above the profiled call
    # alone (the mean of its calls, 2) is what the step lost to it
    steps = [
        _step(10, 1, 8, 5, pipeline=6),
        _step(10, 1, 8, 6, pipeline=6),
        _step(14, 1, 12, 9, pipeline=6),
    ]
    out = _tfres_xplane.with_step_alone(steps, [1.5, 2.5, 2.0], [1.0, 1.1, 1.2])
    assert [s["contention_seconds"] for s in out] == [3, 4, 7]
    assert [s["input_seconds"] for s in out] == [4, 5, 8]
    assert [s["compute_seconds"] for s in out] == [2, 2, 2]
    assert all(
        s["input_seconds"] + s["compute_seconds"] + s["other_seconds"] == s["duration_seconds"]
        for s in out
    )


def test_a_step_with_little_pipeline_work_beside_it_lost_at_most_that_work() -> None:
    # a step 7 s slower than the call alone, its pipeline working 1 of its 10 s (under
    # PIPELINE_SHARE): the pipeline took at most those 1 s; the rest (another program, the
    # machine) is not input
    (step,) = _tfres_xplane.with_step_alone([_step(10, 0.1, 9, 9, pipeline=1)], [2.0], [1.0])
    assert step["contention_seconds"] == 1 and step["input_seconds"] == 1.1
    assert step["compute_seconds"] == 8
    # with no pipeline working beside it, the step lost nothing to its input
    (idle,) = _tfres_xplane.with_step_alone([_step(10, 0.1, 9, 9)], [2.0], [1.0])
    assert idle["contention_seconds"] == 0 and idle["input_seconds"] == 0.1


def test_the_process_cpu_above_a_plain_call_alones_is_the_pipelines_work_beside_it() -> None:
    # a TextLineDataset's file reads run no op the trace shows (pipeline ops: 1 of 10 s),
    # yet the unprofiled calls after the window ran 9 CPU seconds where a plain call alone
    # ran 3: 6 s beside each step, above PIPELINE_SHARE, so all 7 s above the call alone are
    # input
    def cpu_beside_seconds(plain_cpu: float | None, plain_threads: Any = None) -> float | None:
        return None if plain_cpu is None else max(0.0, 9.0 - plain_cpu)

    window = SimpleNamespace(
        workers_share=None, profiler_seconds=lambda: None, cpu_beside_seconds=cpu_beside_seconds
    )
    steps = [_step(10, 0.1, 9, 9, pipeline=1)]
    (step,), _ = _tfres_xplane.window_input(steps, window, [2.0], [2.0], plain_cpu=3.0)
    assert step["cpu_beside_seconds"] == 6 and step["contention_seconds"] == 7
    assert step["input_seconds"] == pytest.approx(7.1)
    # no CPU read for the call alone: the trace's ops alone bound it (1 s)
    (old,), _ = _tfres_xplane.window_input([_step(10, 0.1, 9, 9, pipeline=1)], window, [2.0])
    assert "cpu_beside_seconds" not in old and old["contention_seconds"] == 1
    # calls that ran no more CPU than alone (slowed by other programs): the trace's ops
    (slow,), _ = _tfres_xplane.window_input(
        [_step(10, 0.1, 9, 9, pipeline=1)], window, [2.0], plain_cpu=9.5
    )
    assert slow["cpu_beside_seconds"] == 0 and slow["contention_seconds"] == 1


def test_worker_processes_busy_beside_the_steps_count_as_the_pipelines_work() -> None:
    # the trace sees no op of a PyDataset's worker processes: their CPU over the window (0.3
    # of a core per second) puts 3 of the step's 10 s beside it, above PIPELINE_SHARE
    (step,) = _tfres_xplane.with_step_alone([_step(10, 0.1, 9, 9)], [2.0], [1.0], 0.3)
    assert step["contention_seconds"] == 7 and step["input_seconds"] == 7.1
    (below,) = _tfres_xplane.with_step_alone([_step(10, 0.1, 9, 9)], [2.0], [1.0], 0.2)
    assert below["contention_seconds"] == 2


def test_a_step_that_waited_counts_all_it_ran_above_the_plain_call_as_input() -> None:
    # a step that waits lasts as long as its pipeline takes: whatever slowed its math (the
    # pipeline beside it, the profiler's own events) only shortened its wait. Profiled calls
    # alone: 4.5; plain calls alone: 2. Step by step, running above 2 is input.
    steps = [
        _step(10, 5, 5, 5, blocked=5),
        _step(10, 3, 7, 7, blocked=3),
        _step(10, 8, 2, 2, blocked=8),
    ]
    out = _tfres_xplane.with_step_alone(steps, [4.0, 4.5, 5.0], [1.5, 2.0, 2.5])
    assert [s["contention_seconds"] for s in out] == [3, 5, 0]
    assert [s["input_seconds"] for s in out] == [8, 8, 8]
    assert [s["compute_seconds"] for s in out] == [2, 2, 2]
    # without plain calls (an older hook's record), the profiled ones
    (old,) = _tfres_xplane.with_step_alone([_step(10, 5, 5, 5, blocked=5)], [4.0])
    assert old["contention_seconds"] == 1


def test_a_wait_that_overlapped_the_steps_own_math_is_compute() -> None:
    # steps_per_execution > 1: the next batch's IteratorGetNext blocks while the last one's
    # ops still run, so the trace reads 8 of 10 s blocked and the step running 2, where its
    # function alone on cached batches takes 4: 2 s of the wait were the step's own math
    (step,) = _tfres_xplane.with_step_alone([_step(10, 8, 2, 2, blocked=8)], [5.0], [4.0])
    assert step["input_seconds"] == 6 and step["compute_seconds"] == 4
    assert step["overlap_seconds"] == 2 and step["contention_seconds"] == 0
    assert step["other_seconds"] == 0
    # a step that ran above the call alone has no overlap
    (slower,) = _tfres_xplane.with_step_alone([_step(10, 5, 5, 5, blocked=5)], [5.0], [4.0])
    assert "overlap_seconds" not in slower and slower["contention_seconds"] == 1


def test_the_step_alone_is_the_mean_of_its_calls_slow_ones_included() -> None:
    # the window's steps are summed, their slow ones in the sum: the cached side keeps its
    # slow calls too (the tf.data guide's mean against mean), where a quartile dropped them
    assert _tfres_xplane.step_alone_seconds([1.0, 1.0, 1.0, 5.0]) == 2.0
    waited = _step(10, 5, 5, 5, blocked=5)
    (step,) = _tfres_xplane.with_step_alone([waited], [9.0], [1.0, 1.0, 1.0, 5.0])
    assert step["contention_seconds"] == 3 and step["compute_seconds"] == 2


def test_a_step_no_slower_than_alone_or_no_timing_is_read_as_traced() -> None:
    steps = [_step(10, 1, 8, 8.5, pipeline=6)]
    assert _tfres_xplane.with_step_alone([dict(s) for s in steps], []) == steps
    (faster,) = _tfres_xplane.with_step_alone([dict(s) for s in steps], [9.0])
    assert faster["input_seconds"] == 1 and faster["contention_seconds"] == 0
    untimed = dict(steps[0])
    del untimed["running_seconds"]  # no call marker in the trace: a user's own window
    assert _tfres_xplane.with_step_alone([dict(untimed)], [1.0]) == [untimed]


def test_a_step_that_waited_gives_the_profilers_cost_up_from_its_input() -> None:
    steps = [
        _step(10, 8, 2, 2, blocked=8),  # waited: the slower pipeline made it wait longer
        _step(10, 0.1, 9, 9, pipeline=6),  # did not wait: the profiler is in its compute
        _step(10, 0.5, 9.5, 9.5, blocked=0.5),  # waited, less than the cost: input to 0
    ]
    out = _tfres_xplane.without_profiler([dict(s) for s in steps], 1.0)
    assert [s["profiler_seconds"] for s in out] == [1.0, 1.0, 0.5]
    assert [s["input_seconds"] for s in out] == [7, 0.1, 0]
    assert [s["compute_seconds"] for s in out] == [2, 8, 9.5]
    for s in out:  # the parts and the profiler's cost still make the step
        parts = ("input_seconds", "compute_seconds", "other_seconds", "profiler_seconds")
        assert sum(s[k] for k in parts) == pytest.approx(s["duration_seconds"])
    assert _tfres_xplane.without_profiler([dict(s) for s in steps], None) == steps
    assert _tfres_xplane.summary(out)["profiler_seconds"] == 2.5
    other = dict(steps[0], kind="evaluate")  # no profiler window over evaluate steps
    assert _tfres_xplane.without_profiler([dict(other)], 1.0) == [other]


def test_a_step_that_waited_gives_the_profilers_cost_on_its_function_up_from_its_compute() -> None:
    # the profiler added 1 s to each step, 0.25 s of it to the function alone: a step that
    # waited lasts as long as its pipeline, which the other 0.75 s slowed (unseen26's TFRecord
    # parse map read 50% against 62% when all of it came out of the input)
    steps = [_step(10, 8, 2, 2, blocked=8), _step(10, 0.5, 9.5, 9.5, blocked=0.5)]
    out = _tfres_xplane.without_profiler([dict(s) for s in steps], 1.0, 0.25)
    assert [s["profiler_seconds"] for s in out] == [1.0, 0.75]
    assert [s["input_seconds"] for s in out] == [7.25, 0.0]
    assert [s["compute_seconds"] for s in out] == [1.75, 9.25]
    for s in out:
        parts = ("input_seconds", "compute_seconds", "other_seconds", "profiler_seconds")
        assert sum(s[k] for k in parts) == pytest.approx(s["duration_seconds"])


def test_the_profilers_cost_on_a_pipeline_beside_a_step_comes_out_of_its_contention() -> None:
    # did not wait; ran 3 s above the profiled call alone beside a busy pipeline
    contended = dict(_step(10, 3.1, 6, 9, pipeline=6), contention_seconds=3.0)
    alone = _step(10, 0.1, 9, 9)  # nothing beside it: no contention counted
    steps = [contended, alone]
    # the profiler added 1 s to each step, 0.25 s of it to the function alone
    out = _tfres_xplane.without_profiler([dict(s) for s in steps], 1.0, 0.25)
    assert [s["profiler_seconds"] for s in out] == [1.0, 1.0]
    # the other 0.75 s slowed the pipeline, which took that much more from the function
    assert out[0]["input_seconds"] == pytest.approx(2.35)
    assert out[0]["contention_seconds"] == pytest.approx(2.25)
    assert out[0]["compute_seconds"] == pytest.approx(5.75)
    assert out[1]["input_seconds"] == 0.1 and out[1]["compute_seconds"] == 8
    for s in out:
        parts = ("input_seconds", "compute_seconds", "other_seconds", "profiler_seconds")
        assert sum(s[k] for k in parts) == pytest.approx(s["duration_seconds"])
    # less contention than the cost beside the function: the rest is compute
    small = dict(_step(10, 0.4, 8.7, 9, pipeline=6), contention_seconds=0.3)
    (out_small,) = _tfres_xplane.without_profiler([small], 1.0, 0.25)
    assert out_small["input_seconds"] == pytest.approx(0.1)
    assert out_small["compute_seconds"] == pytest.approx(8.0)
