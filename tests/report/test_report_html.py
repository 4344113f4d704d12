"""The HTML report: self-contained, escaped, and drawn for real in headless Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from _bench_shared import HOSTILE_LABEL, tiny_bench_record
from browser import load_page, non_white_fraction
from tfres.record import Record, load, save
from tfres.report.html import render_html, write_html
from tfres.timeline import Sample

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel


@pytest.fixture(scope="module")
def html() -> str:
    return render_html(tiny_bench_record())


def test_page_is_self_contained(html: str) -> None:
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html.lower()
    # nothing is fetched: no src/href to the network, no CSS import or remote url()
    assert not re.search(r'(?:src|href)\s*=\s*"(?:https?:)?//', html, re.I)
    assert "@import" not in html and not re.search(r"url\(\s*['\"]?https?:", html)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_every_section_is_there(html: str) -> None:
    record = tiny_bench_record()
    for heading in ("Findings", "Workloads", "Batch sweep", "Timeline", "Machine"):
        assert f"<h2>{heading}" in html, heading
    assert html.count('<svg class="chart"') == 3  # CPU, memory, batch sweep (no GPU here)
    assert "No GPU samples: NVIDIA driver" in html
    for w in record.workloads:
        assert str(w["device"]) in html
    assert "tf_matmul n=512" in html and "of the estimated peak" in html
    assert "host-to-device" in html
    assert record.fingerprint["cpu"]["model"] in html
    for p in record.phases:
        assert f"<td>{p.name}</td>" in html


def test_record_strings_are_escaped(html: str) -> None:
    assert HOSTILE_LABEL not in html
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt; $x^2$ [red]r[/red] &amp; &quot;q&quot;"
    assert escaped in html
    assert "<i>mark</i>" not in html and "&lt;i&gt;mark&lt;/i&gt;" in html


def test_findings_show_severity_evidence_cause_and_fix() -> None:
    record = Record(
        findings=[
            {
                "rule": "r",
                "severity": "critical",
                "title": "GPU idle <50%>",
                "evidence": "util 3% & falling",
                "cause": "input <bound>",
                "fix": "use prefetch()",
                "span": [1.0, 2.5],
            },
            {
                "rule": "s",
                "severity": "info",
                "title": "fyi",
                "evidence": "e",
                "cause": "c",
                "fix": "f",
                "span": None,
            },
        ]
    )
    html = render_html(record)
    assert '<div class="finding critical">' in html and '<div class="finding info">' in html
    assert "GPU idle &lt;50%&gt;" in html and "util 3% &amp; falling" in html
    assert "input &lt;bound&gt;" in html and "<code>use prefetch()</code>" in html
    assert "t = 1.0 to 2.5 s" in html
    assert html.index("critical") < html.index("finding info")


def test_a_run_record_and_an_empty_record_render(tmp_path: Path) -> None:
    run = Record(
        kind="run",
        command=["python", "-c", "print('<b>')"],
        samples=[
            Sample(
                t_seconds=t / 10,
                cpu_percent=10.0,
                cpu_per_core_percent=(5.0, 15.0),
                process_rss_bytes=2**28,
            )
            for t in range(10)
        ],
        steps=[
            {"t_seconds": 0.1 * i, "duration_seconds": 0.05, "epoch": 0, "step": i}
            for i in range(20)
        ],
        elapsed_seconds=1.0,
    )
    html = render_html(run)
    assert "python -c print(&#x27;&lt;b&gt;&#x27;)" in html
    assert "<h2>Steps</h2>" in html and "Workloads" not in html
    assert html.count('<svg class="chart"') == 2
    assert "No samples in this record" in render_html(Record())
    path = write_html(run, tmp_path / "sub" / "r.html")
    assert path.read_text(encoding="utf-8") == html
    save(run, tmp_path / "run.json")
    assert render_html(load(tmp_path / "run.json")) == html


@pytest.mark.browser
def test_chromium_draws_the_page_without_errors_and_shows_the_label_as_text(
    tmp_path: Path, html: str
) -> None:
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")
    page = load_page(path)
    assert page.console_errors == []
    assert page.dialogs == []  # the <script>alert(1)</script> label never ran
    assert HOSTILE_LABEL in page.text  # shown to the reader exactly as typed
    assert HOSTILE_LABEL in page.title
    assert page.dom.count("<svg") == 3
    assert "&lt;i&gt;mark&lt;/i&gt; $m$ --&gt;" in page.dom  # the mark, drawn as SVG text
    assert "<i>mark</i>" not in page.dom
    assert non_white_fraction(page.screenshot_png) > 0.05  # charts drawn, not a blank page
