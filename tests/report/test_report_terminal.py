"""The terminal report: at most 100 columns, record strings printed as typed."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from _bench_shared import HOSTILE_LABEL, tiny_bench_record
from tfres.record import Record
from tfres.report.terminal import render_record, workload_table
from tfres.timeline import Phase, Sample

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel


def _render(record: Record, width: int = 100) -> str:
    buf = io.StringIO()
    render_record(record, Console(file=buf, width=width, force_terminal=False, color_system=None))
    return buf.getvalue()


@pytest.fixture(scope="module")
def text() -> str:
    return _render(tiny_bench_record())


def test_fits_100_columns(text: str) -> None:
    widths = [len(line.rstrip()) for line in text.splitlines()]
    assert max(widths) <= 100


def test_shows_header_workloads_phases_and_findings(text: str) -> None:
    record = tiny_bench_record()
    assert record.id in text
    for needle in (
        "workloads",
        "cpu_matmul n=64",
        "tf_matmul n=512",
        "train_small fit",
        "batch_sweep batch 16",
        "input_pipeline naive",
        "GFLOP/s",
        "samples/s",
        "phases",
        "train_small CPU:0",
        "peak estimate:",
        "machine",
    ):
        assert needle in text, needle
    if record.findings:
        assert "findings (" in text
        assert record.findings[0]["title"][:30] in text.replace("\n", " ")


def test_record_strings_are_not_rich_markup(text: str) -> None:
    assert HOSTILE_LABEL in text  # "[red]r[/red]" printed literally, not as colour


def test_a_run_record_without_workloads_renders_too() -> None:
    r = Record(
        kind="run",
        command=["python", "train.py", "--lr", "[bold]0.1[/bold]"],
        samples=[
            Sample(
                t_seconds=t / 10,
                cpu_percent=20.0,
                process_cpu_percent=90.0,
                process_rss_bytes=2**30,
            )
            for t in range(30)
        ],
        phases=[Phase("epoch 1", 0.0, 1.5), Phase("epoch 2", 1.5, 2.9)],
        elapsed_seconds=3.0,
        status="failed",
        exit_code=3,
        notes=["GPU metrics unavailable: [no driver]"],
    )
    out = _render(r)
    assert "python train.py --lr [bold]0.1[/bold]" in out
    assert "failed (exit 3)" in out and "epoch 2" in out and "[no driver]" in out
    assert "workloads" not in out
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 100


def test_workload_table_on_a_wide_console_stays_within_100_columns() -> None:
    buf = io.StringIO()
    console = Console(file=buf, width=100, force_terminal=False)
    long = dict(
        tiny_bench_record().workloads[0], error="out of memory " + "x" * 300, throughput=None
    )
    console.print(workload_table([long, *tiny_bench_record().workloads]))
    assert max(len(line) for line in buf.getvalue().splitlines()) <= 100
    assert "out of memory" in buf.getvalue()
