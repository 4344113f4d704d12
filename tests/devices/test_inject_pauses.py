"""A custom loop's own evaluation (`_tfres_pauses`): the pauses between its steps where the
model ran outside the training step become phases, and the training step is told from an
evaluation step called more often."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from tfres.devices.child_env import INJECT_DIR

sys.path.insert(0, str(INJECT_DIR))
import _tfres_pauses as pauses  # noqa: E402

sys.path.remove(str(INJECT_DIR))


def _loop(name: str, steps: list[tuple[float, float, float]], *, eager: bool = False):
    """A loop's stats as `_tfres_loops` keeps them: (begin, step seconds, wait, call)."""
    rows = [(begin, step, None, call) for begin, step, call in steps]
    return SimpleNamespace(name=name, eager=eager, steps=rows, last_end=rows[-1][0] + rows[-1][1])


def _steady(n: int, t0: float, step: float = 0.01, call: float = 0.008):
    return [(t0 + i * step, step, call) for i in range(n)]


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pauses, "MODEL_CALLS", [])
    monkeypatch.setattr(pauses, "TRAINING_GRAPHS", set())


def test_a_pause_where_the_model_ran_is_the_loops_evaluation() -> None:
    # 20 steps of 10 ms, a 3 s pause (an epoch's evaluation: 30 eager model calls), 20 more
    before = _steady(20, 0.0)
    paused = (0.2, 3.01, 0.008)  # from the end of step 19 to the end of this call
    after = _steady(19, 3.21)
    hot = _loop("train_step", [*before, paused, *after])
    pauses.MODEL_CALLS.extend((0.25 + 0.09 * i, 0.33 + 0.09 * i) for i in range(30))
    found, trailing = pauses.find(hot, [hot])
    assert list(found) == [20] and trailing is None
    start, end, runs = found[20]
    assert (start, runs) == (0.2, 30) and end == pytest.approx(0.33 + 0.09 * 29)


def test_a_pause_without_the_model_or_a_short_one_is_left_in_the_step() -> None:
    hot = _loop("train_step", [*_steady(20, 0.0), (0.2, 3.01, 0.008), *_steady(19, 3.21)])
    pauses.MODEL_CALLS.extend([(0.3, 0.4), (0.5, 0.6)])  # two runs: a sample printed
    assert pauses.find(hot, [hot]) == ({}, None)
    # steps of 50 ms with 40 ms outside the call: a 0.3 s gap is under ten of those
    steps = [(i * 0.05, 0.05, 0.01) for i in range(20)] + [(1.0, 0.3, 0.01)]
    pauses.MODEL_CALLS[:] = [(1.0 + 0.05 * i, 1.04 + 0.05 * i) for i in range(5)]
    assert pauses.find(_loop("train_step", steps), []) == ({}, None)


def test_an_evaluation_step_called_more_often_runs_the_model_and_is_not_the_loop() -> None:
    pauses.TRAINING_GRAPHS.add("train_step")
    hot = _loop("train_step", [*_steady(20, 0.0), (0.2, 2.01, 0.008), *_steady(19, 2.21)])
    # 50 calls of a tf.function that applies no optimizer, in the pause and after the end
    evals = [(0.2 + 0.035 * i, 0.035, 0.03) for i in range(50)]
    evals += [(hot.last_end + 0.035 * i, 0.035, 0.03) for i in range(50)]
    eval_step = _loop("eval_step", evals)
    assert pauses.trains(hot) and not pauses.trains(eval_step)
    found, trailing = pauses.find(hot, [hot, eval_step])
    assert found[20][2] == 50 and found[20][1] == pytest.approx(0.2 + 0.035 * 50)
    assert trailing[0] == hot.last_end and trailing[2] == 50
    # a loop that trains, called less often, is still told apart: not an evaluation's runs
    pauses.TRAINING_GRAPHS.add("eval_step")
    assert pauses.find(hot, [hot, eval_step]) == ({}, None)


def test_an_eager_steps_own_forward_pass_is_not_evaluation() -> None:
    # an eager loop calls its model (training unset) just before its optimizer: the last
    # run in the gap is the step's own
    steps = [*_steady(20, 0.0), (0.2, 1.01, 0.008), *_steady(19, 1.21)]
    pauses.MODEL_CALLS.extend([(0.3, 0.4), (0.5, 0.6), (1.19, 1.2)])
    assert pauses.find(_loop("Adam.apply", steps, eager=True), []) == ({}, None)
    pauses.MODEL_CALLS.insert(0, (0.25, 0.28))
    found, _ = pauses.find(_loop("Adam.apply", steps, eager=True), [])
    assert found[20] == (0.2, 0.6, 3)


def test_traced_training_marks_the_function_being_traced(tmp_path) -> None:
    tf = pytest.importorskip("tensorflow")

    @tf.function
    def train_step() -> None:
        pauses.traced_training(tf)

    @tf.function
    def eval_step() -> None:
        pass

    train_step()
    eval_step()
    assert "train_step" in pauses.TRAINING_GRAPHS
    assert "eval_step" not in pauses.TRAINING_GRAPHS
