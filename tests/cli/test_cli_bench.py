"""``tfres bench``: the README's main command, run for real."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from browser import load_page, non_white_fraction
from tfres.cli import main
from tfres.cli.bench import parse_overrides
from tfres.store import Store
from tfres.workloads import WORKLOADS

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One real ``tfres bench --quick`` in a subprocess, as a user runs it."""
    work = tmp_path_factory.mktemp("bench-quick")
    store = work / "store.sqlite"
    cmd = [
        sys.executable,
        "-m",
        "tfres",
        "bench",
        "--quick",
        "--label",
        "quick <b>1</b>",
        "--store",
        str(store),
    ]
    start = time.monotonic()
    out = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=240)
    wall = time.monotonic() - start
    # the time is reported, not asserted (timing tests are forbidden; see
    # docs/benchmarks/bench.md for the < 60 s check on a quiet machine)
    print(f"tfres bench --quick took {wall:.1f} s wall, TensorFlow import included")
    return {"out": out, "wall": wall, "work": work, "store": store}


@pytest.mark.slow
def test_quick_bench_succeeds_saves_the_record_and_writes_the_report(quick_run: dict) -> None:
    out = quick_run["out"]
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Traceback" not in out.stderr
    with Store(quick_run["store"]) as s:
        runs = s.runs()
        assert len(runs) == 1 and runs[0].kind == "bench" and runs[0].status == "ok"
        record = s.get(runs[0].id)
    assert record.label == "quick <b>1</b>"
    ran = {w["name"] for w in record.workloads}
    assert ran == {name for name, w in WORKLOADS.items() if w.default}
    assert all(w["error"] is None for w in record.workloads), [
        (w["name"], w["error"]) for w in record.workloads if w["error"]
    ]
    assert record.extra["bench"]["quick"] is True
    html = quick_run["work"] / f"tfres-bench-{record.id}.html"
    assert html.is_file()
    assert f"saved as run 1 in {quick_run['store']}" in out.stdout.replace("\n", "")
    assert "HTML report:" in out.stdout and html.name in out.stdout.replace("\n", "")
    for name in ran:
        assert name in out.stdout
    # a progress bar per workload, on stderr
    for name in ran:
        assert name in out.stderr


@pytest.mark.slow
@pytest.mark.browser
def test_quick_bench_report_renders_in_chromium(quick_run: dict) -> None:
    html = next(Path(quick_run["work"]).glob("tfres-bench-*.html"))
    page = load_page(html)
    assert page.console_errors == []
    assert page.dom.count('<svg class="chart"') >= 3
    assert "quick <b>1</b>" in page.text
    assert non_white_fraction(page.screenshot_png) > 0.05


def test_bad_arguments_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--only", "nope", "--no-store", "--no-html"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        f"tfres: error: unknown workload 'nope'; choose from: {', '.join(WORKLOADS)}"
    ]
    assert main(["bench", "--set", "sizes=3", "--no-store"]) == 2
    assert "--set takes NAME.KEY=VALUE" in capsys.readouterr().err
    assert main(["bench", "--set", "cpu_matmul.nope=3", "--no-store"]) == 2
    assert "cpu_matmul has no parameter 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["bench", "--device", "tpu"])
    assert info.value.code == 2


def test_device_gpu_without_a_gpu_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--device", "gpu", "--no-store", "--no-html"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tfres: error: no GPU for --device gpu: ")


def test_json_output_and_html_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    html = tmp_path / "out" / "b.html"
    rc = main(
        [
            "bench",
            "--only",
            "cpu_matmul",
            "--set",
            "cpu_matmul.sizes=48,64",
            "--set",
            "cpu_matmul.repeats=2",
            "--json",
            "--html",
            str(html),
            "--no-store",
        ]
    )
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert data["store_number"] is None and data["html"] == str(html.resolve())
    assert [w["params"]["n"] for w in data["workloads"]] == [48, 64]
    assert all(w["repeats"] == 2 for w in data["workloads"])
    assert html.is_file() and "cpu_matmul n=48" in html.read_text(encoding="utf-8")


def test_parse_overrides_reads_json_lists_and_words() -> None:
    assert parse_overrides(["a.b=1,2", "a.c=0.5", "x.y=true", "x.z=word", "x.w=[1, 2]"]) == {
        "a": {"b": [1, 2], "c": 0.5},
        "x": {"y": True, "z": "word", "w": [1, 2]},
    }
