"""``tfres report``: any saved record in the terminal and as HTML."""

from __future__ import annotations

from pathlib import Path

import pytest

from _bench_shared import tiny_bench_record
from tfres.cli import main
from tfres.record import Record, save
from tfres.store import Store
from tfres.timeline import Sample

# what the pages show of a record: no time or CPU share is asserted (the shared bench
# record is made once per worker: the report tests of the parallel pass made it already)
pytestmark = pytest.mark.parallel


def test_report_from_the_store_with_html(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tiny_bench_record()
    with Store(store_path) as s:
        n = s.save(record)
    html = tmp_path / "r.html"
    assert main(["report", str(n), "--html", str(html)]) == 0
    out = capsys.readouterr().out
    assert record.id in out and "cpu_matmul n=64" in out
    assert f"HTML report: {html.resolve()}" in out.replace("\n", "")
    text = html.read_text(encoding="utf-8")
    assert "<h2>Workloads</h2>" in text and record.id in text


def test_report_of_a_run_record_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = Record(
        kind="run",
        command=["python", "train.py"],
        samples=[
            Sample(t_seconds=t / 10, cpu_percent=30.0, process_rss_bytes=2**27) for t in range(5)
        ],
        elapsed_seconds=0.5,
        status="ok",
        exit_code=0,
    )
    path = save(run, tmp_path / "run.json")
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "python train.py" in out and "ok (exit 0)" in out


def test_missing_run_and_bad_usage(store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report"]) == 2
    assert "needs a RUN" in capsys.readouterr().err
    assert main(["report", "42"]) == 1
    assert "tfres: error: no store at" in capsys.readouterr().err  # and none was made
    assert not store_path.exists()
    Store(store_path).close()
    assert main(["report", "42"]) == 1
    assert "tfres: error: no run '42' in store" in capsys.readouterr().err
    assert main(["report", "--job", "nojob"]) == 1
    assert "no runs of job 'nojob'" in capsys.readouterr().err
    assert main(["report", "3", "--job", "x"]) == 2
    assert "either RUN or --job" in capsys.readouterr().err


def test_job_report_uses_the_job_module(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store(store_path) as s:
        for worker in (0, 1):
            s.save(
                Record(
                    kind="run",
                    job="j1",
                    worker=worker,
                    status="ok",
                    elapsed_seconds=1.0,
                    samples=[Sample(t_seconds=t / 10, cpu_percent=20.0 + worker) for t in range(5)],
                )
            )
    assert main(["report", "--job", "j1"]) == 0
    assert "j1" in capsys.readouterr().out
    page = tmp_path / "job.html"
    assert main(["report", "--job", "j1", "--html", str(page)]) == 0
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "tfres job: j1" in html
    assert "from job j1" in html
