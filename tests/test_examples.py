"""Every script in examples/ runs and says what it promises."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(python: str, name: str) -> str:
    done = subprocess.run(
        [python, str(EXAMPLES / name)], capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_monitor_keras_records_samples_and_steps(python: str) -> None:
    out = run_example(python, "monitor_keras.py")
    samples, steps = (int(w) for w in out.split()[0:4:2])
    assert samples >= 2
    assert steps == 2 * 32  # 2 epochs of ceil(2000 / 64) batches
    assert "status ok" in out


@pytest.mark.slow
def test_memory_budget_stops_training_with_a_checkpoint(python: str) -> None:
    out = run_example(python, "memory_budget.py")
    assert "stopped:" in out
    assert "checkpoint saved: True" in out


@pytest.mark.slow
def test_configure_devices_applies_then_refuses_too_late(python: str) -> None:
    out = run_example(python, "configure_devices.py")
    assert "CPU:1" in out  # the two logical CPUs were applied
    assert "as expected:" in out
    assert "intra_op_threads" in out.split("as expected:")[1]


def test_every_example_has_a_test() -> None:
    tested = {"monitor_keras.py", "memory_budget.py", "configure_devices.py"}
    assert {p.name for p in EXAMPLES.glob("*.py")} == tested
