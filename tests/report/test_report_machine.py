"""report/machine.py: tfres env's fingerprint tables and tfres doctor's checks."""

from __future__ import annotations

import pytest
from rich.console import Console

from tfres.machine.checks import Check
from tfres.machine.fingerprint import fingerprint
from tfres.report.machine import checks_json, overall_status, render_checks, render_fingerprint

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel


def _text(render, *args) -> str:  # noqa: ANN001
    out = Console(width=100, record=True, force_terminal=False)
    render(*args, out)
    return out.export_text()


def test_fingerprint_of_this_machine_has_every_section_within_100_columns() -> None:
    fp = fingerprint(tensorflow=False, processes=False, gpus=False).to_dict()
    text = _text(render_fingerprint, fp)
    for title in ("Host", "CPU", "Memory", "GPUs", "TensorFlow", "Environment"):
        assert title in text
    assert max(len(line) for line in text.splitlines()) <= 100
    assert fp["host"]["hostname"] in text


def test_affinity_is_written_as_a_cpu_list_and_missing_values_as_na() -> None:
    fp = {"cpu": {"affinity": [0, 1, 2, 5], "cgroup_cpu_quota_cores": None, "source": "x"}}
    text = _text(render_fingerprint, fp)
    assert "0-2,5" in text
    assert "n/a" in text


def test_checks_show_verdict_evidence_fix_and_the_exit_status() -> None:
    checks = [
        Check("swap", "ok", "0 B of swap in use", title="swap not in use"),
        Check("gpu_visible", "fail", "TensorFlow sees none", "pip install x", "GPU visible"),
    ]
    text = _text(render_checks, checks)
    assert "FAIL" in text and "TensorFlow sees none" in text and "pip install x" in text
    assert "1 ok, 1 fail; exit status 1" in text


def test_overall_status_is_the_worst_check_and_a_warning_is_not_a_failure() -> None:
    ok = Check("a", "ok", "fine")
    warn = Check("b", "warn", "slow", fix="do x")
    fail = Check("c", "fail", "broken", fix="do y")
    skip = Check("d", "skip", "not here")
    assert overall_status([ok, skip]) == "ok"
    assert overall_status([ok, warn, skip]) == "warn"
    assert overall_status([warn, fail]) == "fail"
    answer = checks_json([ok, warn])
    assert answer["status"] == "warn"
    assert [c["name"] for c in answer["checks"]] == ["a", "b"]
