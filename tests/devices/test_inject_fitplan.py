"""_tfres_fitplan: the default profiler window fitted to a Keras ``fit`` of known length."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tfres.devices.inject import _tfres_window
from tfres.devices.inject._tfres_fitplan import fitted_last, train_calls

MIN_TRACED = _tfres_window.MIN_TRACED


def test_a_long_fit_keeps_the_default_window() -> None:
    assert fitted_last(5, 24, 0, 1000, 10) == 24
    assert fitted_last(5, 24, 0, 200, 1) == 24  # 10% of 200 steps is 20: the whole window


def test_a_short_epoch_leaves_unprofiled_steps_after_the_window() -> None:
    # 25 steps an epoch (unseen57's dashcam fit): the window ends at step 17, so steps
    # 20-24, past the two after it that stop the profiler, are its unprofiled steps
    last = fitted_last(5, 24, 0, 25)
    assert last == 24 - _tfres_window.SKIP_AFTER - _tfres_window.MIN_LATER == 17
    assert 24 - (last + _tfres_window.SKIP_AFTER) >= _tfres_window.MIN_LATER


def test_a_short_run_traces_a_tenth_of_its_steps_but_never_fewer_than_min_traced() -> None:
    assert fitted_last(5, 24, 0, 100, 1) == 5 + 10 - 1  # a tenth of 100 steps
    assert fitted_last(5, 24, 0, 30, 1) == 5 + MIN_TRACED - 1  # unseen71's 30-step glyph fit
    assert fitted_last(5, 24, 0, 10) == 5 + MIN_TRACED - 1  # an epoch too short for both


def test_the_window_is_left_alone_where_the_fit_does_not_say_or_does_not_hold_it() -> None:
    assert fitted_last(5, 24, 0, None, 3) == 24  # a generator of unknown length
    assert fitted_last(5, 24, 0, 0, 3) == 24
    assert fitted_last(5, 24, 8, 25, 1) == 24  # an earlier fit held step 5
    assert fitted_last(5, 24, 0, 4, 1) == 24  # this fit ends before step 5: a later one has it


def test_steps_count_from_the_fits_own_first_step() -> None:
    # a second fit numbered on from step 3: its first epoch is steps 3-27
    assert fitted_last(5, 24, 3, 25) == 27 - _tfres_window.SKIP_AFTER - _tfres_window.MIN_LATER


@given(
    first=st.integers(0, 50),
    length=st.integers(1, 40),
    fit_start=st.integers(0, 50),
    steps=st.one_of(st.none(), st.integers(-2, 500)),
    epochs=st.one_of(st.none(), st.integers(1, 20)),
)
def test_a_fitted_window_is_never_longer_and_never_shorter_than_min_traced(
    first: int, length: int, fit_start: int, steps: int | None, epochs: int | None
) -> None:
    last = first + length - 1
    fitted = fitted_last(first, last, fit_start, steps, epochs)
    assert first + min(MIN_TRACED, length) - 1 <= fitted <= last


def test_train_calls_reads_kerass_params() -> None:
    assert train_calls({"steps": 30, "epochs": 2, "verbose": 0}) == (30, 2)
    assert train_calls({"steps": 30, "epochs": 2}, steps_per_execution=4) == (8, 2)
    assert train_calls({"steps": None, "epochs": 5}) == (None, 5)
    assert train_calls({}) == (None, None)
    assert train_calls(None, steps_per_execution=None) == (None, None)
