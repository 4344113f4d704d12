"""``tfres batch-size``: a real search from the command line, its table and its errors."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tfres.batchsize.finder import BatchSizeResult, Trial
from tfres.cli import main

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel

SCRIPT = textwrap.dedent(
    """
    import numpy as np

    def build_model():
        import keras
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16), keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        return model

    def make_data():
        return np.ones((64, 4), "float32"), np.ones((64, 1), "float32")
    """
)


@pytest.fixture
def script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "train.py").write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    return "train.py:build_model"


def test_json_result_of_a_real_search(script: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "batch-size",
            script,
            "--budget",
            "4GiB",
            "--start",
            "32",
            "--max-batch-size",
            "32",
            "--steps",
            "2",
            "--json",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    result = BatchSizeResult.from_dict(json.loads(captured.out))
    assert result.largest_batch_size == 32
    assert [t.batch_size for t in result.trials] == [32]
    assert result.trials[0].peak_bytes and result.trials[0].samples_per_second
    assert result.stopped_because == "max_batch_size 32 fits"
    assert "batch size     32: ok" in captured.err  # one line per trial as it ends


def test_table_shows_each_trial_and_the_answer(capsys: pytest.CaptureFixture[str]) -> None:
    from tfres.cli.batchsize import _render

    result = BatchSizeResult(
        largest_batch_size=512,
        best_throughput_batch_size=256,
        budget_bytes=2**31,
        margin=0.9,
        device="cpu",
        max_batch_size=4096,
        stopped_because="converged: 512 fits, 530 does not",
        trials=(
            Trial(256, "ok", peak_bytes=900 * 2**20, samples_per_second=5000.0, seconds=4.0),
            Trial(512, "ok", peak_bytes=1700 * 2**20, samples_per_second=4000.0, seconds=5.0),
            Trial(530, "over-margin", peak_bytes=1900 * 2**20, samples_per_second=3900.0),
        ),
    )
    _render(result, "train.py")
    out = capsys.readouterr().out
    assert "budget 2.0 GiB, margin 90%" in out
    assert "over-margin" in out and "1.7 GiB" in out and "5,000" in out
    assert "largest that fits:  512" in out and "best throughput:    256" in out
    assert max(len(line) for line in out.splitlines()) <= 100


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["train.py:nope"], "defines no 'nope' at top level"),
        (["train.py:build_model", "--data", "train.py:absent"], "defines no 'absent'"),
        (["train.py:build_model", "--budget", "99TiB"], "is above the"),
        (["train.py:build_model", "--budget", "0"], "must be above 0"),
        (["train.py:build_model", "--budget", "abc"], "cannot read size 'abc'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    script: str, argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["batch-size", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("tfres: error: ") and words in err[-1]


def test_no_make_data_says_what_to_give(tmp_path: Path, monkeypatch, capsys) -> None:
    (tmp_path / "m.py").write_text("def build():\n    pass\n")
    monkeypatch.chdir(tmp_path)
    assert main(["batch-size", "m.py:build"]) == 2
    assert "give --data script.py:make_data" in capsys.readouterr().err


def test_argparse_rejects_bad_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["batch-size", "x.py:f", "--max-trials", "9"])
    assert info.value.code == 2
    assert "--max-trials is at most 8" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["batch-size", "x.py:f", "--margin", "2"])


def test_help_teaches_with_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["batch-size", "--help"])
    out = capsys.readouterr().out
    assert "tfres batch-size train.py:build_model --budget 2GiB" in out


def test_a_missing_model_script_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["batch-size", "nofile.py:build_model"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "tfres: error: MODEL: no such file 'nofile.py'"
