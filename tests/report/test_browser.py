"""The headless-Chromium helper itself: it must see errors when there are some."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser import load_page, non_white_fraction

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = [pytest.mark.browser, pytest.mark.parallel]

BROKEN = """<!DOCTYPE html><html><head><title>broken</title></head><body>
<h1>broken page</h1>
<script>console.error("deliberate console error"); not_defined_anywhere();</script>
<script>alert("deliberate dialog")</script>
</body></html>"""

CLEAN = """<!DOCTYPE html><html><head><title>clean</title></head>
<body style="margin:0"><div style="width:600px;height:400px;background:#123"></div></body></html>"""


def test_broken_page_errors_and_dialogs_are_caught(tmp_path: Path) -> None:
    path = tmp_path / "broken.html"
    path.write_text(BROKEN, encoding="utf-8")
    page = load_page(path)
    joined = "\n".join(page.console_errors)
    assert "deliberate console error" in joined
    assert "not_defined_anywhere is not defined" in joined
    assert page.dialogs == ["deliberate dialog"]
    assert page.title == "broken" and "broken page" in page.text


def test_clean_page_has_no_errors_and_its_pixels_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "clean.html"
    path.write_text(CLEAN, encoding="utf-8")
    page = load_page(path, width=1000, height=800)
    assert page.console_errors == []
    fraction = non_white_fraction(page.screenshot_png)
    assert fraction == pytest.approx(600 * 400 / (1000 * 800), abs=0.02)
