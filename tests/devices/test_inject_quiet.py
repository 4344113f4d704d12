"""_tfres_quiet: tfres times the step alone once the program's other threads are idle."""

from __future__ import annotations

import pytest

from tfres.devices.inject import _tfres_quiet


def test_the_step_alone_waits_for_the_programs_other_threads_to_go_idle() -> None:
    # a pipeline's thread busy for 3 more intervals of 50 ms (its CPU seconds go up 0.05 a
    # step, a core), then idle: the calls start once an interval passes with under 10%
    cpu = iter([0.0, 0.05, 0.10, 0.15, 0.151, 9.0])
    waited, quiet = _tfres_quiet.wait_for_quiet(5.0, lambda: next(cpu), lambda s: None)
    assert quiet is True and next(cpu) == 9.0  # read five times: it stopped at the idle one
    # still busy at the bound: said so; no /proc: cannot tell, no wait
    busy = iter(0.05 * i for i in range(10**6))
    assert _tfres_quiet.wait_for_quiet(0.0, lambda: next(busy), lambda s: None)[1] is False
    assert _tfres_quiet.wait_for_quiet(5.0, lambda: None, lambda s: None) == (0.0, None)


def test_a_real_busy_thread_is_waited_for() -> None:
    import threading
    import time

    def burn(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    worker = threading.Thread(target=burn, args=(0.3,))
    worker.start()
    waited, quiet = _tfres_quiet.wait_for_quiet(5.0)
    worker.join()
    assert quiet is True and waited >= 0.2  # not before the thread stopped burning
    waited, quiet = _tfres_quiet.wait_for_quiet(5.0)
    assert quiet is True and waited < 0.5  # nothing else busy: one interval or so


def test_the_fields_and_the_note() -> None:
    notes: list[str] = []
    assert _tfres_quiet.quiet_fields(None, notes.append) == {}
    assert _tfres_quiet.quiet_fields((0.05, True), notes.append) == {
        "quiet_wait_seconds": 0.05,
        "quiet": True,
    }
    assert not notes
    assert _tfres_quiet.quiet_fields((1.0, False), notes.append)["quiet"] is False
    assert notes and "still busy 1.0 s" in notes[0]


def test_settle_calls_once_waits_then_warms_up_for_a_tenth_of_a_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a clock that only the calls move (1/64 s each: exact in binary), so the count is exact
    # on a loaded machine too
    now = [0.0]
    monkeypatch.setattr(_tfres_quiet, "_clock", lambda: now[0])
    events: list[str] = []

    def call(seconds: float) -> None:
        events.append("call")
        now[0] += seconds

    def wait(max_seconds: float) -> tuple[float, bool]:
        events.append(f"wait {max_seconds}")
        return (0.05, True)

    # calls of 1/64 s: one cold call, the wait, then the calls that fit in 0.1 s, each
    # taken to last as long as the one before: 6 (6/64 s), a seventh would end at 7/64 s
    assert _tfres_quiet.settle(lambda: call(1 / 64), 2.0, wait) == (0.05, True)
    assert events == ["call", "wait 2.0"] + ["call"] * 6
    # a call longer than the warm-up: the cold call alone, no more
    events.clear()
    _tfres_quiet.settle(lambda: call(0.15), 2.0, wait)
    assert events == ["call", "wait 2.0"]
