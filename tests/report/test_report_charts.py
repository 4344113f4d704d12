"""Charts: matplotlib figures to inline SVG, phases shaded, record strings escaped."""

from __future__ import annotations

import re

import pytest

from _bench_shared import tiny_bench_record
from tfres.record import Record
from tfres.report import charts
from tfres.timeline import Mark, Phase, Sample

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel


@pytest.fixture(scope="module")
def record() -> Record:
    return tiny_bench_record()


def test_figure_to_svg_is_one_svg_element_with_page_unique_ids(record: Record) -> None:
    a = charts.figure_to_svg(charts.cpu_chart(record), title="CPU")
    b = charts.figure_to_svg(charts.memory_chart(record))
    for svg in (a, b):
        assert svg.startswith("<svg ") and svg.rstrip().endswith("</svg>")
        assert "<?xml" not in svg and "<!DOCTYPE" not in svg and "<metadata>" not in svg
        assert 'class="chart"' in svg and "viewBox=" in svg
    ids_a = set(re.findall(r'\bid="([^"]+)"', a))
    ids_b = set(re.findall(r'\bid="([^"]+)"', b))
    assert ids_a and ids_b and not ids_a & ids_b
    for ref in re.findall(r'(?:href="#|url\(#)([^")]+)', a):
        assert ref in ids_a, f"dangling reference #{ref}"
    assert "<title>CPU</title>" in a


def test_phase_names_and_marks_are_drawn_as_escaped_text(record: Record) -> None:
    longest = max(record.phases, key=lambda p: (p.end_seconds or 0) - p.start_seconds)
    svg = charts.figure_to_svg(charts.cpu_chart(record))
    assert f">{longest.name}<" in svg  # a wide phase is labelled, as SVG text
    svg = charts.figure_to_svg(charts.memory_chart(record))
    assert "&lt;i&gt;mark&lt;/i&gt; $m$ --&gt;" in svg  # the mark: escaped, $ kept literal
    assert "<i>mark</i>" not in svg


def test_hostile_strings_never_become_markup_or_math() -> None:
    nasty = "<script>alert(1)</script> $\\frac{a}{b}$ ]]> -->"
    r = Record(
        samples=[
            Sample(
                t_seconds=t / 10,
                cpu_percent=50.0,
                cpu_per_core_percent=(40.0, 60.0),
                process_cpu_percent=80.0,
                memory_used_bytes=2**30,
                process_rss_bytes=2**29,
            )
            for t in range(20)
        ],
        phases=[Phase(nasty, 0.0, 1.0)],
        marks=[Mark(1.5, nasty)],
        elapsed_seconds=2.0,
    )
    svg = charts.figure_to_svg(charts.cpu_chart(r))
    assert "<script" not in svg and "]]>" not in svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt; $\\frac{a}{b}$ ]]&gt; --&gt;" in svg
    assert charts.mpl_text("a $b$") == "a \\$b\\$"


def test_charts_are_none_when_there_is_nothing_to_draw() -> None:
    empty = Record()
    assert charts.cpu_chart(empty) is None
    assert charts.memory_chart(empty) is None
    assert charts.gpu_chart(empty) is None
    assert charts.batch_sweep_chart(empty) is None


def test_batch_sweep_chart_plots_every_batch_size(record: Record) -> None:
    svg = charts.figure_to_svg(charts.batch_sweep_chart(record))
    for label in ("16", "64", "batch size", "samples / second"):
        assert f">{label}<" in svg


def test_gpu_chart_draws_each_gpu() -> None:
    from tfres.timeline import GpuSample

    samples = [
        Sample(
            t_seconds=t / 10,
            gpus=(
                GpuSample(index=0, util_percent=float(t * 5), memory_used_bytes=t * 2**28),
                GpuSample(index=1, util_percent=10.0),
            ),
        )
        for t in range(20)
    ]
    svg = charts.figure_to_svg(charts.gpu_chart(Record(samples=samples, elapsed_seconds=2.0)))
    assert ">GPU 0<" in svg and ">GPU 1<" in svg and "utilization %" in svg
