"""Which of a custom loop's statements make the step's input (`_tfres_feed`, loaded in the
child without tfres): read from the script's own source, a statement is input when it assigns
what the step's statement reads, directly or through other input statements; bookkeeping,
and a library preparing the call, is not."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tfres.devices.child_env import INJECT_DIR

sys.path.insert(0, str(INJECT_DIR))
import _tfres_feed  # noqa: E402

sys.path.remove(str(INJECT_DIR))

LOOP = """\
import json
import numpy as np

def train(model, files, steps, history):
    for step in range(steps):
        xs = []
        for path in files[step]:
            with open(path) as f:
                xs.append(json.load(f))
        x = np.stack(
            xs
        )
        batch = {}
        batch["y"] = x.sum(axis=1)
        log = [v for v in history if v]
        history.append(len(log))
        model.count += 1
        logs = model.train_on_batch(x, batch["y"])
        print(step, logs)
"""
CALL = 18  # the line of model.train_on_batch(...)
FILLS_XS, STACKS, FILLS_BATCH, LOGS, HISTORY, ATTRIBUTE, PRINTS = 9, 10, 14, 15, 16, 17, 19


def _script(tmp_path: Path) -> str:
    path = tmp_path / "train.py"
    path.write_text(LOOP)
    return str(path)


def test_a_statement_spans_its_lines_and_a_header_its_own_names(tmp_path: Path) -> None:
    table = _tfres_feed.statements(_script(tmp_path))
    assert table[10] == table[11] == table[12]  # x = np.stack(\n xs\n)
    first, stores, loads, _ = table[STACKS]
    assert first == 10 and stores == {"x"} and {"np", "xs"} <= loads
    assert table[7][1] == {"path"} and "files" in table[7][2]  # a for header: target, iter
    assert table[8][1] == {"f"}  # with ... as f
    assert table[FILLS_XS][1] == {"xs"}  # xs.append(...) fills xs
    assert table[FILLS_BATCH][1] == {"batch"}  # batch["y"] = ... assigns an item of batch
    assert "v" not in table[LOGS][1] and table[LOGS][1] == {"log"}  # a comprehension's own
    assert table[ATTRIBUTE][1] == set() and "model" in table[ATTRIBUTE][2]  # not model


def test_a_match_header_holds_its_subject_not_its_cases(tmp_path: Path) -> None:
    path = tmp_path / "match.py"
    path.write_text("match kind:\n    case 'a':\n        x = load()\n")
    table = _tfres_feed.statements(str(path))
    assert table[1][1] == set() and table[1][2] == {"kind"}  # not the case body's x
    assert table[3][1] == {"x"}


def test_what_feeds_the_step_is_input_and_bookkeeping_is_not(tmp_path: Path) -> None:
    seconds = {
        (FILLS_XS, None): 0.030,  # json.load of each file: assigns xs, read by x = ...
        (STACKS, None): 0.004,  # np.stack: assigns x, which the call reads
        (FILLS_BATCH, None): 0.002,  # batch["y"]: read by the call
        (LOGS, None): 0.010,  # bookkeeping: log is read only by history.append
        (HISTORY, None): 0.001,
        (ATTRIBUTE, None): 0.001,
        (PRINTS, None): 0.020,  # printing the previous step's logs
    }
    got = _tfres_feed.feeding_seconds(_script(tmp_path), CALL, frozenset(), seconds)
    assert abs(got - 0.036) < 1e-9


def test_a_statement_links_to_the_step_though_the_gap_missed_the_link(tmp_path: Path) -> None:
    # the samples of one gap all landed in xs.append(...), none in x = np.stack(xs)
    script = _script(tmp_path)
    got = _tfres_feed.feeding_seconds(script, CALL, frozenset(), {(FILLS_XS, None): 0.012})
    assert abs(got - 0.012) < 1e-9
    assert {FILLS_XS, STACKS, FILLS_BATCH, 7, 8} <= _tfres_feed.input_statements(script, CALL)


def test_only_the_calls_own_function_is_followed(tmp_path: Path) -> None:
    path = tmp_path / "two.py"
    path.write_text(
        "def other():\n"
        "    x = slow()\n"  # another function's x: not the loop's
        "\n"
        "def loop(step):\n"
        "    x = load()\n"
        "    step(x)\n"
    )
    assert _tfres_feed.input_statements(str(path), 6) == {5}


def _train_on_batch() -> None:  # a frame between the loop and the hot function
    pass


def _next_batch() -> None:  # a helper called to make an argument
    pass


def test_the_calls_own_statement_counts_outside_the_frames_that_lead_to_the_step(
    tmp_path: Path,
) -> None:
    keras_code, helper_code = _train_on_batch.__code__, _next_batch.__code__
    seconds = {(CALL, keras_code): 0.002, (CALL, helper_code): 0.005, (CALL, None): 0.001}
    got = _tfres_feed.feeding_seconds(_script(tmp_path), CALL, frozenset([keras_code]), seconds)
    assert abs(got - 0.006) < 1e-9  # a helper making an argument, and the line itself


def test_unreadable_source_or_an_unknown_line_reads_no_statement_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("for x in (:\n")
    assert _tfres_feed.statements(str(bad)) == {}
    assert _tfres_feed.statements("<string>") == {}
    assert _tfres_feed.feeding_seconds("<string>", 3, frozenset(), {(2, None): 1.0}) == 0.0
    script = _script(tmp_path)
    assert _tfres_feed.feeding_seconds(script, 2, frozenset(), {(STACKS, None): 1.0}) == 0.0


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _script(tmp_path_factory.mktemp("feed"))


@given(
    st.dictionaries(
        st.sampled_from([FILLS_XS, STACKS, FILLS_BATCH, LOGS, HISTORY, ATTRIBUTE, PRINTS, CALL]),
        st.floats(0, 1),
    )
)
def test_input_is_never_more_than_the_loops_time(script: str, per_line: dict[int, float]) -> None:
    seconds = {(line, None): s for line, s in per_line.items()}
    got = _tfres_feed.feeding_seconds(script, CALL, frozenset(), seconds)
    assert 0.0 <= got <= sum(per_line.values()) + 1e-9
