"""The compare HTML page: self-contained, every record string escaped, charts drawn;
checked in real headless Chromium (no console errors, not blank, XSS shown as text)."""

from __future__ import annotations

from pathlib import Path

import pytest

import synthetic as S
from tfres.comparison.compare import compare
from tfres.report.compare_html import render_compare_html

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel

XSS = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'


@pytest.fixture(scope="module")
def page() -> tuple[str, object]:
    fp_b = S.fingerprint(
        env={"OMP_NUM_THREADS": "1", "EVIL_" + "X": IMG},
        top_cpu=[{"pid": 3, "name": XSS, "cpu_percent": 80.0}],
    )
    fp_b["env"]["TF_XLA_FLAGS"] = IMG
    a = S.record(
        fp=S.fingerprint(), samples_=S.samples(60, process_cpu=195), label=XSS, kind="bench"
    )
    b = S.record(
        fp=fp_b,
        samples_=S.samples(60, process_cpu=99, other_cores=1.0),
        label="$x^2$ & <b>",
        kind="bench",
    )
    a.workloads = [S.workload("cpu_matmul", 1.0, start=0, end=5.9, variant=XSS, params={"n": 2000})]
    b.workloads = [
        S.workload("cpu_matmul", 3.1, start=0, end=5.9, variant=XSS, params={"n": 2000}),
        S.workload(IMG, 1.0, start=0, end=1),
    ]
    c = compare(a, b)
    return render_compare_html(c, a, b), c


def test_page_is_self_contained(page) -> None:  # noqa: ANN001
    html, _ = page
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html  # no script at all, ours or injected
    assert 'src="http' not in html and 'href="http' not in html and "@import" not in html
    assert html.count("<svg") == 1  # the one shared workload, overlaid


def test_every_record_string_is_escaped(page) -> None:  # noqa: ANN001
    html, _ = page
    assert XSS not in html and IMG not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in html  # the workload only in B
    assert "$x^2$ &amp; &lt;b&gt;" in html  # a label with TeX-looking text stays text


def test_page_holds_the_explanation_diff_and_table(page) -> None:  # noqa: ANN001
    html, c = page
    assert c.explanations[0].text.split(":")[0].replace("<", "&lt;").replace(">", "&gt;") in html
    assert "OMP_NUM_THREADS" in html and "unchanged item(s)" in html
    assert "B/A time" in html and "Only in B" in html


@pytest.mark.browser
def test_page_in_chromium(page, tmp_path: Path) -> None:  # noqa: ANN001
    from browser import load_page, non_white_fraction

    html, _ = page
    path = tmp_path / "compare.html"
    path.write_text(html, encoding="utf-8")
    result = load_page(path)
    assert result.console_errors == []
    assert result.dialogs == []  # no injected alert() ran
    assert XSS in result.text  # shown as text
    assert "3.1x slower on B" in result.text
    assert result.dom.count("<svg") >= 1
    assert non_white_fraction(result.screenshot_png) > 0.02
