"""ResourceMonitor measures input wait the way `tfres run` does: a profiler window, the
IteratorGetNext time inside each step and the step alone on a cached batch (a real Keras fit
on a slow generator)."""

from __future__ import annotations

import statistics
import time

import pytest

pytestmark = pytest.mark.slow


def _fit(cb, sleep_seconds: float, steps: int = 15) -> None:
    np = pytest.importorskip("numpy")
    keras = pytest.importorskip("keras")

    def batches():
        while True:
            time.sleep(sleep_seconds)
            yield np.ones((16, 8), "float32"), np.ones((16, 1), "float32")

    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    model.fit(batches(), steps_per_epoch=steps, epochs=1, verbose=0, callbacks=[cb])


def test_window_steps_carry_measured_input_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    from tfres.callbacks.resource_monitor import ResourceMonitor
    from tfres.diagnosis.facts import input_wait_fraction

    monkeypatch.delenv("TFRES_INSTRUMENT", raising=False)
    monkeypatch.delenv("TFRES_STEPS_FILE", raising=False)
    cb = ResourceMonitor(sample=False, store=False, input_wait_window=(3, 10))
    _fit(cb, 0.03, steps=20)
    waited = [s for s in cb.steps if s.get("input_wait_seconds") is not None]
    assert len(waited) == 8
    assert all(0 <= s["input_wait_seconds"] <= s["duration_seconds"] for s in waited)
    # steps 13-19 ran unprofiled after the window: what the profiler added is told
    assert all(s.get("profiler_seconds", -1) >= 0 for s in waited)
    # a 30 ms reader and a one-layer model: most of each step waits for the next batch
    assert input_wait_fraction(waited) > 0.6
    assert cb.record is not None and cb.record.steps == cb.steps
    # step 2 lent its batch; the same train function on it, alone, after the window, costs
    # less than a typical window step, which waits ~30 ms for its batch. (Not less than every
    # one: a batch the adapter's reader thread had ready makes a window step as short as the
    # step alone, give or take the machine's noise.)
    alone = cb.record.extra["step_alone_seconds"]
    assert 0 < alone < statistics.median(s["duration_seconds"] for s in waited)
    # its calls waited for the program's other threads to go idle (Linux), and a wait that
    # ran out (a busy machine) is noted
    quiet = cb.record.extra["step_alone_quiet"]
    assert isinstance(quiet, bool) and cb.record.extra["step_alone_quiet_wait_seconds"] > 0
    assert any("still busy" in n for n in cb.record.notes) == (quiet is False)
    assert not [n for n in cb.record.notes if "not timed" in n]
    # the window read the unprofiled calls after it, as the hook's does: the pipeline's CPU
    # beside each call (until session 64 the callback stopped telling it the steps once it
    # had traced, and its calls' CPU ended at the first step after it)
    window = cb._window.window
    assert all(window.calls_cpu.get(i) is not None for i in range(13, 20))
    assert window.cpu_beside_seconds(cb._window.alone.plain_cpu_seconds) is not None


def test_the_default_window_leaves_unprofiled_steps_in_a_short_epoch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tfres.callbacks.resource_monitor import ResourceMonitor

    monkeypatch.delenv("TFRES_INSTRUMENT", raising=False)
    monkeypatch.delenv("TFRES_STEPS_FILE", raising=False)
    cb = ResourceMonitor(sample=False, store=False)  # the default window, steps 5-24
    _fit(cb, 0.01, steps=25)  # one epoch of 25 steps: 5-24 would trace all of it from 5 on
    waited = [s["step"] for s in cb.steps if s.get("input_wait_seconds") is not None]
    # fitted: 8 steps (a tenth of 25 is fewer), then unprofiled ones in the same epoch, which
    # tell what the profiler added to each window step
    assert waited == list(range(5, 13))
    assert all(s.get("profiler_seconds", -1) >= 0 for s in cb.steps if s["step"] in waited)


def test_a_window_from_step_0_borrows_the_batch_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from tfres.callbacks.resource_monitor import ResourceMonitor

    monkeypatch.delenv("TFRES_INSTRUMENT", raising=False)
    monkeypatch.delenv("TFRES_STEPS_FILE", raising=False)
    cb = ResourceMonitor(sample=False, store=False, input_wait_window=(0, 5))
    _fit(cb, 0.01)
    assert cb.record is not None and cb.record.extra["step_alone_seconds"] > 0


def test_window_off_and_bad_window() -> None:
    from tfres.callbacks.resource_monitor import ResourceMonitor

    cb = ResourceMonitor(sample=False, store=False, input_wait_window=None)
    _fit(cb, 0.0)
    assert all(s.get("input_wait_seconds") is None for s in cb.steps)
    with pytest.raises(ValueError, match=r"\(7, 3\)"):
        ResourceMonitor(sample=False, store=False, input_wait_window=(7, 3))
