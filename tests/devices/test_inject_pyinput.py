"""The gap timer of custom loops fed from Python (`_tfres_pyinput`, loaded in the child
without tfres): generator resumptions, iterator `__next__` and `ds[i]` are input; plain calls
and nested generators are not counted twice; a program's own profiler is left in place."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import pytest

from tfres.devices.child_env import INJECT_DIR

sys.path.insert(0, str(INJECT_DIR))
from _tfres_pyinput import GapTimer  # noqa: E402

sys.path.remove(str(INJECT_DIR))


def _batches(seconds: float) -> Iterator[int]:
    i = 0
    while True:
        time.sleep(seconds)
        yield i
        i += 1


def _bookkeeping(seconds: float) -> None:
    time.sleep(seconds)  # the loop's own Python (logging, metrics): not input


def test_a_generator_resumption_is_input_and_the_loops_own_python_is_not() -> None:
    batches, timer = _batches(0.03), GapTimer()
    assert timer.start()
    next(batches)
    _bookkeeping(0.05)
    seconds = timer.stop()
    assert seconds is not None and 0.028 <= seconds < 0.045
    assert sys.getprofile() is None


def test_a_generator_reading_another_counts_once() -> None:
    def outer() -> Iterator[int]:
        inner = _batches(0.02)
        while True:
            time.sleep(0.01)
            yield next(inner)

    timer = GapTimer()
    gen = outer()
    timer.start()
    next(gen)
    seconds = timer.stop()
    assert seconds is not None and 0.028 <= seconds < 0.045


class _Dataset:
    def __len__(self) -> int:
        return 10

    def __getitem__(self, i: int) -> int:
        time.sleep(0.02)
        return i


class _Reader:
    def __iter__(self) -> _Reader:
        return self

    def __next__(self) -> int:
        time.sleep(0.02)
        return 1


@pytest.mark.parametrize("read", [lambda: _Dataset()[3], lambda: next(_Reader())])
def test_getitem_and_next_methods_are_input(read) -> None:  # noqa: ANN001
    timer = GapTimer()
    timer.start()
    read()
    seconds = timer.stop()
    assert seconds is not None and 0.018 <= seconds < 0.035


def test_stopped_inside_the_input_counts_up_to_the_stop() -> None:
    timer = GapTimer()

    def reader() -> Iterator[float]:
        time.sleep(0.02)
        yield timer.stop() or 0.0  # the hot function is called from inside the generator

    timer.start()
    seconds = next(reader())
    assert 0.018 <= seconds < 0.035 and not timer.on


def test_a_program_profiler_is_left_in_place() -> None:
    def theirs(frame, event, arg):  # noqa: ANN001, ANN202
        return None

    sys.setprofile(theirs)
    try:
        timer = GapTimer()
        assert timer.start() is False and not timer.available
        assert timer.stop() is None
        assert sys.getprofile() is theirs
    finally:
        sys.setprofile(None)


def test_a_gap_past_its_limit_turns_the_hook_off_and_is_not_measured() -> None:
    timer = GapTimer()
    timer.start(limit_seconds=0.01)
    _bookkeeping(0.02)
    _bookkeeping(0.0)  # the first event past the deadline removes the hook
    assert sys.getprofile() is None and not timer.on
    assert timer.stop() is None
