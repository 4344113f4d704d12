"""The profiler window (`_tfres_window`) on real Keras: it traces its steps, marks the train
function's calls only inside it, says when it stopped, and leaves a user's own profiler
session alone."""

from __future__ import annotations

import hashlib
import multiprocessing
import pickle
import statistics
import threading
import time
from typing import Any

import numpy as np
import pytest

from tfres.devices.inject import _tfres_alone, _tfres_cpu, _tfres_window, _tfres_xplane

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")


def _model() -> Any:
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(3)])
    model.compile("sgd", "mse")
    return model


def _data() -> Any:
    x = np.ones((64, 8), "float32")
    return tf.data.Dataset.from_tensor_slices((x, np.ones((64, 3), "float32"))).batch(16)


def _no_arm(model: Any, only_open: bool = False) -> None:
    """A window's ``arm`` that lends nothing."""


def test_the_profiler_window_leaves_a_users_own_profiler_session_alone(tmp_path: Any) -> None:
    stopped: list[Any] = []
    armed: list[Any] = []
    window = _tfres_window.ProfilerWindow(
        1, 2, _tfres_xplane.CALL_MARKER, armed.append, stopped=stopped.append
    )
    model = _model()
    tf.profiler.experimental.start(str(tmp_path / "users"))  # the program's own session
    try:
        window.begin(0, model, lambda: str(tmp_path / "ours"))  # lends its batch: armed
        with pytest.raises(tf.errors.AlreadyExistsError):
            window.begin(1, model, lambda: str(tmp_path / "ours"))
        assert window.state == "done"
        window.begin(2, model, lambda: str(tmp_path / "ours"))  # never tried again
        window.end_step()
        assert window.stop() is False and stopped == []
    finally:
        tf.profiler.experimental.stop()  # the user's session is still theirs to stop
    assert armed == [model]
    assert model.__dict__.get("train_function") is None  # no call was marked (none made)


def test_the_profiler_window_traces_its_steps_and_says_when_it_stopped(tmp_path: Any) -> None:
    stopped: list[Any] = []
    window = _tfres_window.ProfilerWindow(
        0, 1, _tfres_xplane.CALL_MARKER, _no_arm, stopped=stopped.append
    )
    model = _model()
    model.fit(_data(), steps_per_epoch=1, epochs=1, verbose=0)  # a train function to mark
    function = model.train_function
    for index in range(3):  # steps 0 and 1 traced; step 2 stops the window
        window.begin(index, model, lambda: str(tmp_path))
        window.end_step()
    assert window.stop_error() is None
    assert window.state == "done" and stopped == [window] and window.logdir == str(tmp_path)
    assert list(tmp_path.glob("plugins/profile/*/*.xplane.pb"))
    # still marked, to read the CPU of the unprofiled calls after the window; then put back
    assert model.train_function is not function
    window.release()
    assert model.train_function is function


def test_the_window_reads_the_process_cpu_in_each_call_and_after_it_the_pipelines(
    tmp_path: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(_tfres_window, "THREAD_CALLS", 3)
    window = _tfres_window.ProfilerWindow(0, 1, _tfres_xplane.CALL_MARKER, _no_arm)
    model = _model()
    model.fit(_data(), steps_per_epoch=1, epochs=1, verbose=0)  # a train function to mark
    function = model.train_function
    iterator = iter(_data().repeat())
    for index in range(9):  # steps 0 and 1 in the window, 2 and 3 stop it, 4-8 unprofiled
        window.begin(index, model, lambda: str(tmp_path))
        start = time.perf_counter()
        model.train_function(iterator)
        window.end_step()
        window.timed(index, 0, time.perf_counter() - start)
    # the process's CPU in every call, by step, the window's and the unprofiled ones
    assert sorted(window.calls_cpu) == list(range(9))
    assert all(0 < cpu < 5 for cpu in window.calls_cpu.values())
    # and by thread in the first THREAD_CALLS unprofiled calls only: none in the window's
    by_thread = [i for i, r in sorted(window.calls_threads.items()) if r is not None]
    assert by_thread == [4, 5, 6]
    # the pipeline's work beside a step: the unprofiled calls' median above a plain call's
    later = statistics.median(window.calls_cpu[i] for i in range(4, 9))
    assert window.cpu_beside_seconds(later / 4) == pytest.approx(later * 3 / 4)
    assert window.cpu_beside_seconds(1000.0) == 0.0  # no more than the call alone
    assert window.cpu_beside_seconds(None) is None  # the call alone was not read
    # a later call in a step (the step alone's, at exit) is not the step's own
    own = window.calls_cpu[8]
    model.train_function(iterator)
    assert window.calls_cpu[8] == own
    # the window's epoch ends: the train function is put back
    window.timed(9, 1, 0.01)
    assert model.train_function is function


def test_an_unprofiled_steps_time_outside_its_call_is_read_after_the_window(
    tmp_path: Any,
) -> None:
    window = _tfres_window.ProfilerWindow(0, 0, _tfres_xplane.CALL_MARKER, _no_arm)
    model = _model()
    model.fit(_data(), steps_per_epoch=1, epochs=1, verbose=0)  # a train function to mark
    iterator = iter(_data().repeat())
    calls: dict[int, float] = {}
    for index in range(9):  # step 0 traced, 1 stops the window, 2 skipped, 3-8 unprofiled
        start = time.perf_counter()
        window.begin(index, model, lambda: str(tmp_path))
        called = time.perf_counter()
        model.train_function(iterator)
        calls[index] = time.perf_counter() - called
        window.end_step()
        time.sleep(0.004)  # the step's time outside its call: Keras's loop, the callbacks
        window.timed(index, 0, time.perf_counter() - start)
        if index == 6:  # four unprofiled steps so far (3-6): one short of MIN_LATER
            assert window.outside_seconds() is None
    # each step's duration less its call's, the call timed by the window's wrapper (inside
    # the call timed here): about the 4 ms slept, a sleep runs long on a busy machine
    outside = window.outside_seconds()
    assert outside is not None and 0.004 <= outside < 0.004 + 0.05
    assert all(0 < window.calls_wall[i] <= calls[i] for i in range(3, 9))
    assert sorted(window.calls_wall) == list(range(9))


def _spin(stop: threading.Event) -> None:
    data = bytes(2**20)
    while not stop.is_set():
        hashlib.sha256(data).digest()  # a pipeline's native work (no GIL held), beside the step


def test_the_cpu_beside_a_step_is_what_other_threads_than_the_call_alones_ran(
    tmp_path: Any,
) -> None:
    # calls of some milliseconds, so that the burner runs during them on a busy machine
    model = keras.Sequential([keras.Input((256,)), keras.layers.Dense(1024), keras.layers.Dense(3)])
    model.compile("sgd", "mse")
    x = np.ones((512, 256), "float32")
    data = tf.data.Dataset.from_tensor_slices((x, np.ones((512, 3), "float32"))).batch(256)
    model.fit(data, steps_per_epoch=1, epochs=1, verbose=0)  # a train function to mark
    iterator = iter(data.repeat())
    # the call alone, nothing beside it: the threads it runs on
    cpu: list[float] = []
    readings: list[Any] = []
    _tfres_alone.timed_calls(lambda: model.train_function(iterator), 0.0, cpu, 1, readings)
    assert len(readings) == len(cpu) == _tfres_alone.MIN_CALLS
    plain = _tfres_cpu.call_threads(readings)
    assert plain and threading.get_native_id() in plain  # the caller's own thread
    window = _tfres_window.ProfilerWindow(0, 0, _tfres_xplane.CALL_MARKER, _no_arm)
    stop = threading.Event()
    burner = threading.Thread(target=_spin, args=(stop,))
    for index in range(9):  # step 0 traced, 1 stops the window, 2 skipped, 3-8 unprofiled
        if index == 3:
            burner.start()
        window.begin(index, model, lambda: str(tmp_path))
        model.train_function(iterator)
        time.sleep(0.002)  # the burner runs between calls too; only the calls count
        window.end_step()
        window.timed(index, 0, 0.01)
    stop.set()
    burner.join()
    later = [window.calls_threads[i] for i in range(3, 9)]
    assert all(burner.native_id in reading for reading in later)  # read in every call
    beside = window.cpu_beside_seconds(statistics.fmean(cpu), plain)
    assert beside == window.threads_beside_seconds(plain)
    # the CPU in the calls, and only the calls, of the threads the call alone did not run
    # on: the burner's, most of it
    assert beside == pytest.approx(
        statistics.median(sum(v for t, v in r.items() if t not in plain) for r in later)
    )
    # most of it the burner's, whose thread the call alone did not run on
    burned = statistics.fmean(r[burner.native_id] for r in later)
    others = statistics.fmean(
        sum(v for t, v in r.items() if t not in plain and t != burner.native_id) for r in later
    )
    assert burned > 0 and burned > others
    # threads unknown (not Linux, or the call alone not read by thread): the process's CPU
    # in the calls above the call alone's
    assert window.threads_beside_seconds(None) is None
    process = window.process_beside_seconds(statistics.fmean(cpu))
    assert process is not None
    assert window.cpu_beside_seconds(statistics.fmean(cpu), None) == process


def test_too_few_unprofiled_calls_after_the_window_tell_no_cpu_beside(tmp_path: Any) -> None:
    window = _tfres_window.ProfilerWindow(0, 0, _tfres_xplane.CALL_MARKER, _no_arm)
    model = _model()
    model.fit(_data(), steps_per_epoch=1, epochs=1, verbose=0)
    iterator = iter(_data().repeat())
    for index in range(7):  # steps 3-6 unprofiled: 4, under MIN_LATER
        window.begin(index, model, lambda: str(tmp_path))
        model.train_function(iterator)
        window.end_step()
        window.timed(index, 0, 0.01)
    assert _tfres_window.MIN_LATER == 5
    assert window.cpu_beside_seconds(0.0) is None


def test_the_pydataset_workers_function_is_marked_pickled_by_reference_and_put_back() -> None:
    from keras.src.trainers.data_adapters import py_dataset_adapter as adapter

    original = adapter.get_index
    undo = _tfres_window.mark_items(_tfres_xplane.ITEM_MARKER)
    try:
        marked = adapter.get_index
        assert marked is not original and marked.__qualname__ == original.__qualname__
        # a process pool sends it by name: it must come back as the module's function
        assert pickle.loads(pickle.dumps(marked)) is marked
        again = _tfres_window.mark_items(_tfres_xplane.ITEM_MARKER)  # never wrapped twice
        assert adapter.get_index is marked
        again()
        assert adapter.get_index is marked
    finally:
        undo()
    assert adapter.get_index is original


def _burn(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_the_worker_processes_cpu_is_read_over_the_window(tmp_path: Any) -> None:
    window = _tfres_window.ProfilerWindow(0, 0, _tfres_xplane.CALL_MARKER, _no_arm)
    assert _tfres_cpu.workers_cpu_seconds() == 0.0  # no children
    model = _model()  # built first: on a busy machine a build outlasted a short worker
    # the worker outlives the window (a worker that ends inside it takes its CPU with it)
    worker = multiprocessing.get_context("fork").Process(target=_burn, args=(2.0,))
    worker.start()
    try:
        window.begin(0, model, lambda: str(tmp_path))
        time.sleep(0.5)
        window.stop()
    finally:
        worker.join()
    # one busy process beside the window: near a core per second of it (2-core CI: > 0.3)
    assert window.workers_share is not None and 0.3 < window.workers_share <= 1.2


def test_the_window_keeps_its_steps_and_the_unprofiled_ones_after_it_in_its_epoch(
    tmp_path: Any,
) -> None:
    window = _tfres_window.ProfilerWindow(2, 3, _tfres_xplane.CALL_MARKER, _no_arm)
    model = _model()
    seconds = {index: 0.01 * (index + 1) for index in range(12)}
    for index in range(12):
        epoch = 0 if index < 10 else 1
        window.begin(index, model, lambda: str(tmp_path))
        window.end_step()
        window.timed(index, epoch, seconds[index])
    assert window.window_seconds == [seconds[2], seconds[3]]
    # steps 4 and 5 stop the profiler and follow it (SKIP_AFTER); steps 10-11 are epoch 1
    assert _tfres_window.SKIP_AFTER == 2
    assert window.later_seconds == [seconds[i] for i in range(6, 10)]
    # step 1 before the window (step 0 traces the function), in the window's epoch
    assert window.before_seconds == [seconds[1]]


def test_a_second_fits_epoch_0_is_not_the_windows_epoch_0(tmp_path: Any) -> None:
    """A program that trains again (a new model, a fine-tune; ``--truth`` in the accuracy
    scripts) numbers its epochs from 0 again: once the window's epoch or fit has ended,
    later steps are not its unprofiled ones (they were, until session 61: a 7.8 ms cached
    step beside 33 ms window steps left the profiler's cost unread)."""
    model = _model()
    for fit_ends in (True, False):
        window = _tfres_window.ProfilerWindow(2, 3, _tfres_xplane.CALL_MARKER, _no_arm)
        epochs = [0] * 12 + [1] * 2 + [0] * 6 if not fit_ends else [0] * 12 + [0] * 8
        for index, epoch in enumerate(epochs):
            if fit_ends and index == 12:
                window.release()  # the first fit's end (the hook's stop_window)
            window.begin(index, model, lambda: str(tmp_path))
            window.end_step()
            window.timed(index, epoch, 0.01 if index < 12 else 0.002)
        assert window.later_seconds == [0.01] * 6, fit_ends  # steps 6-11 only


def test_the_profilers_cost_is_the_windows_median_step_above_the_unprofiled_ones() -> None:
    later = [0.044, 0.043, 0.045, 0.044, 0.046]
    window = [0.051, 0.050, 0.052]
    assert _tfres_window.profiler_seconds(window, later) == pytest.approx(0.007)
    faster = [0.041, 0.040, 0.042]
    assert _tfres_window.profiler_seconds(faster, later) == 0.0  # the window ran no slower
    # too few steps after the window (an epoch that ended soon after it), or none in it
    assert _tfres_window.profiler_seconds(window, later[:4]) is None
    assert _tfres_window.profiler_seconds([], later) is None
    # a window 48% slower: the profiler traces every op of a busy pipeline (seen: 45%)
    assert _tfres_window.profiler_seconds([0.065], later) == pytest.approx(0.021)
    # a window more than twice as slow: the program changed speed (a cache filled)...
    assert _tfres_window.profiler_seconds([0.089], later) is None
    assert _tfres_window.profiler_seconds([0.089], later, [0.120, 0.118, 0.125]) is None
    # ...unless it ran as fast before the window as after it: only the window was slower
    # (a Keras LSTM: 0.29 s steps traced, 0.15 s before and after)
    steady = [0.046, 0.047, 0.044]
    assert _tfres_window.profiler_seconds([0.089], later, steady) == pytest.approx(0.045)
    assert _tfres_window.profiler_seconds([0.089], later, steady[:2]) is None  # too few


def test_a_window_that_never_traced_keeps_no_steps(tmp_path: Any) -> None:
    window = _tfres_window.ProfilerWindow(1, 1, _tfres_xplane.CALL_MARKER, _no_arm)
    model = _model()
    tf.profiler.experimental.start(str(tmp_path / "users"))  # the program's own session
    try:
        for index in range(8):
            try:
                window.begin(index, model, lambda: str(tmp_path / "ours"))
            except tf.errors.AlreadyExistsError:
                pass
            window.timed(index, 0, 0.01)
    finally:
        tf.profiler.experimental.stop()
    assert window.window_seconds == [] and window.later_seconds == []


def test_a_profiler_that_fails_to_stop_is_told_by_stop_error_not_raised_into_fit(
    tmp_path: Any, monkeypatch: Any
) -> None:
    stopped: list[Any] = []
    window = _tfres_window.ProfilerWindow(
        0, 0, _tfres_xplane.CALL_MARKER, _no_arm, stopped=stopped.append
    )
    model = _model()
    window.begin(0, model, lambda: str(tmp_path))
    real_stop = tf.profiler.experimental.stop

    def failing_stop() -> None:
        real_stop()
        raise tf.errors.UnavailableError(None, None, "export failed")

    monkeypatch.setattr(tf.profiler.experimental, "stop", failing_stop)
    assert window.stop() is True
    error = window.stop_error()
    assert isinstance(error, tf.errors.UnavailableError) and stopped == [window]
    assert window.state == "done" and window.stop_error() is None  # told once


def _run_window(window: Any, tmp_path: Any, steps: int, step_seconds: float) -> None:
    model = _model()
    for index in range(steps):
        window.begin(index, model, lambda: str(tmp_path))
        time.sleep(step_seconds)
        window.end_step()
        window.timed(index, 0, step_seconds)
    window.stop()


def test_a_long_window_ends_early_once_it_traced_enough_steps(tmp_path: Any) -> None:
    armed: list[Any] = []
    stopped: list[Any] = []
    window = _tfres_window.ProfilerWindow(
        0, 29, _tfres_xplane.CALL_MARKER, armed.append, stopped=stopped.append, max_seconds=0.05
    )
    _run_window(window, tmp_path, 14, 0.01)
    # 8 traced steps (MIN_TRACED) took 80 ms, past the 50 ms allowed: step 8 stops it
    assert _tfres_window.MIN_TRACED == 8
    assert window.ended_early and window.last == 7 and window.state == "done"
    assert len(window.window_seconds) == 8 and stopped == [window]
    assert len(armed) == 1  # the step after a window from step 0 lends its batch: step 8
    assert window.later_seconds == [0.01] * (14 - 8 - _tfres_window.SKIP_AFTER)


@pytest.mark.parametrize("max_seconds", [None, 10.0])
def test_a_window_within_its_time_or_uncapped_runs_to_its_last_step(
    tmp_path: Any, max_seconds: float | None
) -> None:
    window = _tfres_window.ProfilerWindow(
        0, 9, _tfres_xplane.CALL_MARKER, _no_arm, max_seconds=max_seconds
    )
    _run_window(window, tmp_path, 12, 0.01)
    assert not window.ended_early and window.last == 9 and len(window.window_seconds) == 10


def _run_growing_window(
    window: Any,
    tmp_path: Any,
    steps: int,
    grow_bytes: int,
    *,
    before: bool,
) -> list[bytes]:
    """Run ``steps`` steps of a window that starts at step 5; each step keeps ``grow_bytes``
    of new, written memory (resident, as the profiler's buffer is) inside the window only,
    or from step 1 on (``before``): the program's own growth."""
    model = _model()
    kept: list[bytes] = []
    for index in range(steps):
        window.begin(index, model, lambda: str(tmp_path))
        if (index >= 1) if before else window.state == "on":
            kept.append(b"\x01" * grow_bytes)
        window.end_step()
        window.timed(index, 0, 0.001)
    window.stop()
    return kept


def test_a_window_whose_buffer_grows_past_its_cap_ends_after_two_traced_steps(
    tmp_path: Any,
) -> None:
    mib = 2**20
    window = _tfres_window.ProfilerWindow(
        5, 24, _tfres_xplane.CALL_MARKER, _no_arm, max_buffer_bytes=48 * mib
    )
    _run_growing_window(window, tmp_path, 12, 40 * mib, before=False)
    # steps 5 and 6 held 80 MiB, past the 48 allowed: step 7 stops it
    assert _tfres_window.MIN_TRACED_COSTLY == 2
    assert window.ended_early and window.last == 6 and window.state == "done"
    assert len(window.window_seconds) == 2
    assert 70 * mib <= window.buffer_bytes <= 90 * mib, window.buffer_bytes


def test_a_program_growing_as_fast_before_its_window_keeps_the_whole_window(
    tmp_path: Any,
) -> None:
    mib = 2**20
    window = _tfres_window.ProfilerWindow(
        5, 12, _tfres_xplane.CALL_MARKER, _no_arm, max_buffer_bytes=48 * mib
    )
    _run_growing_window(window, tmp_path, 15, 40 * mib, before=True)
    # its own 40 MiB a step, read over steps 1-4, are not the profiler's
    assert not window.ended_early and window.last == 12 and len(window.window_seconds) == 8
    assert window.buffer_bytes < 48 * mib, window.buffer_bytes


def test_the_steps_that_lend_their_batch_are_before_the_window_and_past_step_0() -> None:
    assert _tfres_window.lending_steps(5, 24) == (2, 3, 4)
    assert _tfres_window.lending_steps(2, 10) == (1,)
    assert _tfres_window.lending_steps(1, 10) == (0,)  # nothing else before it
    assert _tfres_window.lending_steps(0, 10) == (11,)  # after a window from step 0
