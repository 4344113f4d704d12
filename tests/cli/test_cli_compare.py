"""`tfres compare A B`: files and store references, terminal, --json, --html, bad input."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import synthetic as S
from tfres.cli import main
from tfres.record import save
from tfres.store import Store


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    a = S.record(
        fp=S.fingerprint(), samples_=S.samples(60, process_cpu=195), kind="bench", label="desk"
    )
    b = S.record(
        fp=S.fingerprint(env={"OMP_NUM_THREADS": "1"}),
        samples_=S.samples(60, process_cpu=99),
        kind="bench",
    )
    a.workloads = [
        S.workload("cpu_matmul", 1.0, start=0, end=5.9, variant="n=2000", params={"n": 2000})
    ]
    b.workloads = [
        S.workload("cpu_matmul", 3.1, start=0, end=5.9, variant="n=2000", params={"n": 2000})
    ]
    return save(a, tmp_path / "a.json"), save(b, tmp_path / "b.json")


def test_compare_two_files_prints_the_explanation(pair, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    assert main(["compare", str(pair[0]), str(pair[1])]) == 0
    out = capsys.readouterr().out
    assert "Why they differ" in out
    assert "3.1x slower on B" in out and "OMP_NUM_THREADS=1" in out
    assert "unchanged:" in out  # folded
    assert max(len(line) for line in out.splitlines()) <= 100


def test_compare_json(pair, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    assert main(["compare", str(pair[0]), str(pair[1]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["a"]["label"] == "desk"
    assert data["workloads"][0]["time_ratio"] == pytest.approx(3.1)
    assert data["explanations"][0]["causes"][0] == "threads.blas"


def test_compare_store_numbers_and_html(pair, tmp_path: Path, store_path: Path, capsys) -> None:  # noqa: ANN001
    from tfres.record import load

    with Store(store_path) as s:
        na = s.save(load(pair[0]))
        nb = s.save(load(pair[1]))
    html = tmp_path / "out" / "cmp.html"
    assert main(["compare", str(na), str(nb), "--html", str(html)]) == 0
    assert f"HTML written to {html}" in capsys.readouterr().out
    text = html.read_text()
    assert text.startswith("<!DOCTYPE html>") and "3.1x slower on B" in text and "<svg" in text


def test_compare_all_lists_unchanged_items(pair, capsys) -> None:  # noqa: ANN001
    assert main(["compare", str(pair[0]), str(pair[1]), "--all"]) == 0
    out = capsys.readouterr().out
    assert "same" in out and "unchanged:" not in out


def test_unknown_run_is_one_line_and_exit_1(pair, capsys) -> None:  # noqa: ANN001
    Store().close()  # an empty store
    assert main(["compare", str(pair[0]), "999"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("tfres: error: no run '999'") and "\n" not in err


def test_broken_record_file_is_one_line(tmp_path: Path, pair, capsys) -> None:  # noqa: ANN001
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "tfres.record", "version": 1, "samples": [')
    assert main(["compare", str(bad), str(pair[1])]) == 1
    assert "is truncated" in capsys.readouterr().err


def test_missing_argument_is_a_usage_error(capsys) -> None:  # noqa: ANN001
    with pytest.raises(SystemExit) as exc:
        main(["compare", "1"])
    assert exc.value.code == 2


def test_console_script_and_help(pair, python: str) -> None:  # noqa: ANN001
    out = subprocess.run(
        [python, "-m", "tfres", "compare", "--help"], capture_output=True, text=True, check=True
    )
    assert "examples:" in out.stdout and "tfres compare 3 7" in out.stdout
    run = subprocess.run(
        [python, "-m", "tfres", "compare", str(pair[0]), str(pair[1])],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0 and "3.1x slower on B" in run.stdout
