"""report/placement.py: tfres placement's timings, verdict and op placement in a terminal."""

from __future__ import annotations

import pytest
from rich.console import Console

from tfres.placement.advice import DeviceTiming, OpPlacement, PlacementAdvice, PlacementLog
from tfres.report.placement import render_advice

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel


def _text(advice: PlacementAdvice) -> str:
    out = Console(width=100, record=True, force_terminal=False)
    render_advice(advice, out)
    return out.export_text()


def _advice(**changes: object) -> PlacementAdvice:
    fields: dict[str, object] = dict(
        best_device="CPU:0",
        speedup=1.8,
        clear=True,
        verdict="run on CPU:0: 1.8x faster than GPU:0",
        timings=(
            DeviceTiming(
                device="CPU:0",
                transfer_in_seconds=0.0001,
                compute_seconds=0.002,
                transfer_out_seconds=0.0001,
                total_seconds=0.0022,
                total_min_seconds=0.002,
                total_max_seconds=0.003,
                repeats=10,
            ),
            DeviceTiming(device="GPU:0", error="NotFoundError: no kernel"),
        ),
        repeats=10,
        warmup=2,
        notes=("GPU:0 failed: NotFoundError: no kernel",),
    )
    fields.update(changes)
    return PlacementAdvice(**fields)  # type: ignore[arg-type]


def test_timings_verdict_and_notes_within_100_columns() -> None:
    text = _text(_advice())
    assert "CPU:0 *" in text  # the best device is starred
    assert "2.200" in text  # milliseconds, three decimals
    assert "2.000-3.000" in text
    assert "failed" in text
    assert "run on CPU:0: 1.8x faster than GPU:0" in text
    assert "note: GPU:0 failed" in text
    assert "where TensorFlow placed" not in text  # no placement log asked for
    assert max(len(line) for line in text.splitlines()) <= 100


def test_placement_table_flags_ops_that_fell_back_and_counts_copies() -> None:
    log = PlacementLog(
        target="GPU:0",
        ops=(
            OpPlacement(op_type="MatMul", device="GPU:0", count=2),
            OpPlacement(op_type="AsString", device="CPU:0", count=1, off_target=True),
        ),
        fell_back=("AsString",),
        copies=3,
    )
    broken = PlacementLog(target="CPU:1", error="ValueError: cannot trace")
    text = _text(_advice(placements=(log, broken)))
    assert "where TensorFlow placed the ops" in text
    assert "fell back to the CPU" in text
    assert "(copies)" in text and "tensors sent between devices" in text
    assert "no log: ValueError: cannot trace" in text
    assert "GPU:0: AsString fell back to the CPU; each such op costs a copy each way" in text
