"""The batch-size finder: the search on its own, then real trials in their own processes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from tfres.batchsize.finder import BatchSizeResult, find_batch_size, isolated_reference
from tfres.batchsize.search import MAX_TRIALS, Trial, classify, search
from tfres.errors import TfresError

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel

MiB = 2**20

# -- the search, driven by a function of the batch size -----------------------------------


def linear(base_mib: float, per_sample_kib: float, budget_mib: float):
    """Trials whose peak grows linearly; past the budget the watchdog would stop them."""
    sizes: list[int] = []

    def run(batch_size: int) -> Trial:
        sizes.append(batch_size)
        peak = int((base_mib + per_sample_kib * batch_size / 1024) * MiB)
        if peak > budget_mib * MiB:
            return Trial(batch_size, "over-budget", peak_bytes=int(budget_mib * MiB))
        return Trial(batch_size, "ok", peak_bytes=peak, samples_per_second=float(batch_size))

    return run, sizes


@pytest.mark.parametrize(
    ("base", "per_sample", "start", "most"),
    [(500, 256, 32, 4096), (600, 8, 1, 65536), (400, 2048, 64, 4096), (550, 40, 8, 100000)],
)
def test_search_lands_within_five_percent_in_at_most_eight_trials(
    base: float, per_sample: float, start: int, most: int
) -> None:
    budget = 1500
    limit = 0.9 * budget
    run, sizes = linear(base, per_sample, budget)
    trials, why = search(run, limit_bytes=limit * MiB, start=start, max_batch_size=most)
    truth = int((limit - base) * 1024 / per_sample)  # the largest size that fits, exactly
    found = max(t.batch_size for t in trials if t.fits)
    assert len(trials) <= MAX_TRIALS
    assert found <= truth  # never reports a size that does not fit
    assert found >= 0.95 * min(truth, most), (sizes, why)
    assert why.startswith(("converged", "max_batch_size"))
    assert sizes[0] == start


def test_search_stops_at_max_and_at_nothing_fits() -> None:
    run, sizes = linear(500, 1, 1500)
    trials, why = search(run, limit_bytes=1350 * MiB, start=16, max_batch_size=64)
    assert sizes == [16, 64] and why == "max_batch_size 64 fits"
    run, sizes = linear(2000, 1, 1500)
    trials, why = search(run, limit_bytes=1350 * MiB, start=32, min_batch_size=4)
    assert why == "even batch size 4 does not fit"
    assert not any(t.fits for t in trials) and sizes[-1] == 4


def test_a_broken_first_trial_is_an_error_with_its_message() -> None:
    def broken(batch_size: int) -> Trial:
        return Trial(batch_size, "error", error="NameError: name 'Dense' is not defined")

    with pytest.raises(TfresError, match="batch size 32 failed: NameError: name 'Dense'"):
        search(broken, limit_bytes=1e9)


def test_classify_marks_trials_past_the_margin() -> None:
    assert classify(Trial(8, "ok", peak_bytes=950), 900).status == "over-margin"
    assert classify(Trial(8, "ok", peak_bytes=850), 900).status == "ok"
    assert classify(Trial(8, "oom"), 900).status == "oom"


def test_references_are_checked_without_importing(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text("import this_module_does_not_exist\ndef build():\n    pass\n")
    assert isolated_reference(f"{script}:build", "model_fn") == f"{script}:build"
    with pytest.raises(ValueError, match="defines no 'nope' at top level"):
        isolated_reference(f"{script}:nope", "model_fn")
    with pytest.raises(ValueError, match="no such file"):
        isolated_reference(f"{tmp_path}/missing.py:build", "model_fn")
    with pytest.raises(ValueError, match="no module named 'no_such_pkg_x'"):
        isolated_reference("no_such_pkg_x:build", "model_fn")
    with pytest.raises(ValueError, match="pass isolate=False"):
        isolated_reference(lambda: None, "model_fn")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="max_trials must be between 1 and 8"):
        find_batch_size("m:f", "m:d", max_trials=9)
    with pytest.raises(ValueError, match="margin"):
        find_batch_size("m:f", "m:d", margin=1.5)
    with pytest.raises(ValueError, match="min_batch_size 64 is above max_batch_size 8"):
        find_batch_size("m:f", "m:d", min_batch_size=64, max_batch_size=8)


# -- real trials ------------------------------------------------------------------------------

MODEL = textwrap.dedent(
    """
    import numpy as np

    def build_model():
        import keras
        model = keras.Sequential(
            [keras.Input((4,)), keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1)]
        )
        model.compile(optimizer="sgd", loss="mse")
        return model

    def make_data():
        return np.ones((100, 4), "float32"), np.ones((100, 1), "float32")

    if __name__ == "__main__":
        raise SystemExit("the finder must not run the script's main block")
    """
)


@pytest.fixture
def model_script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text(MODEL)
    return path


def test_isolated_trials_find_the_max_when_everything_fits(model_script: Path) -> None:
    ends: list[Trial] = []
    x, y = np.ones((50, 4), "float32"), np.ones((50, 1), "float32")
    result = find_batch_size(
        f"{model_script}:build_model",
        (x, y),
        budget="4GiB",
        start_batch_size=16,
        max_batch_size=64,
        steps_per_trial=2,
        on_trial_end=ends.append,
    )
    assert result.largest_batch_size == 64
    assert [t.batch_size for t in result.trials] == [16, 64] == [t.batch_size for t in ends]
    assert all(t.status == "ok" for t in result.trials)
    for t in result.trials:  # a real TensorFlow process: peak RSS well above 100 MiB
        assert t.peak_bytes is not None and 100 * MiB < t.peak_bytes < 4 * 2**30 * 0.9
        assert t.samples_per_second and t.samples_per_second > 0
    assert result.best_throughput_batch_size in (16, 64)
    assert result.device == "cpu" and result.budget_bytes == 4 * 2**30
    assert BatchSizeResult.from_dict(result.to_dict()) == result


def test_a_trial_past_the_budget_is_stopped_and_the_search_goes_down(model_script: Path) -> None:
    # 150 MiB is below what importing TensorFlow takes: every trial must be stopped
    result = find_batch_size(
        f"{model_script}:build_model",
        f"{model_script}:make_data",
        budget="150MiB",
        start_batch_size=16,
        min_batch_size=8,
    )
    assert result.largest_batch_size is None
    assert [t.batch_size for t in result.trials] == [16, 8]
    assert {t.status for t in result.trials} == {"over-budget"}
    assert all(t.error and "exceeded" in t.error for t in result.trials)
    assert result.stopped_because == "even batch size 8 does not fit"


def test_in_process_trials_take_callables(model_script: Path) -> None:
    import keras

    def build():
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        return model

    data = (np.ones((20, 4), "float32"), np.ones((20, 1), "float32"))
    result = find_batch_size(
        build, data, budget="8GiB", isolate=False, start_batch_size=8, max_batch_size=32
    )
    assert result.largest_batch_size == 32
    assert [t.status for t in result.trials] == ["ok", "ok"]

    def broken():
        raise RuntimeError("no such layer")

    with pytest.raises(TfresError, match="RuntimeError: no such layer"):
        find_batch_size(broken, data, budget="8GiB", isolate=False)
