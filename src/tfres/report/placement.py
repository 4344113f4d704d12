"""``tfres placement`` in a terminal: the timings per device, the verdict, and where
TensorFlow placed the ops (at most 100 columns).

    render_advice(advise_placement(predict, x_batch), Console())
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from tfres.placement.advice import PlacementAdvice, PlacementLog

__all__ = ["render_advice"]


def _ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e3:.3f}"


def render_advice(advice: PlacementAdvice, out: Console) -> None:
    """Print the timings table, the verdict and the op placement table (<= 100 columns)."""
    out.print(_timings_table(advice))
    style = "bold green" if advice.clear else "bold"
    out.print(f"[{style}]{advice.verdict}[/{style}]")
    for note in advice.notes:
        out.print(f"[dim]note: {note}[/dim]")
    if not advice.placements:
        return
    out.print(_placement_table(advice.placements))
    for log in advice.placements:
        if log.fell_back:
            out.print(
                f"[yellow]{log.target}: {', '.join(log.fell_back)} fell back to the CPU; "
                "each such op costs a copy each way[/yellow]"
            )


def _timings_table(advice: PlacementAdvice) -> Table:
    """Median milliseconds a call per device, in parts; the best device starred."""
    table = Table(title="time per call (ms, median)", title_justify="left")
    for col in ("device", "transfer in", "compute", "transfer out", "total", "min-max"):
        table.add_column(col, justify="left" if col == "device" else "right")
    for t in advice.timings:
        if t.error:
            table.add_row(t.device, "[red]failed[/red]", "", "", "", "")
            continue
        best = " *" if t.device == advice.best_device else ""
        table.add_row(
            t.device + best,
            _ms(t.transfer_in_seconds),
            _ms(t.compute_seconds),
            _ms(t.transfer_out_seconds),
            _ms(t.total_seconds),
            f"{_ms(t.total_min_seconds)}-{_ms(t.total_max_seconds)}",
        )
    return table


def _placement_table(placements: tuple[PlacementLog, ...]) -> Table:
    """Op types per device for each pinned device; fall-backs and off-device ops flagged."""
    ops = Table(title="where TensorFlow placed the ops", title_justify="left")
    for col in ("pinned to", "op type", "ran on", "count", "note"):
        ops.add_column(col, justify="right" if col == "count" else "left", overflow="fold")
    for log in placements:
        if log.error:
            ops.add_row(log.target, "", "", "", f"no log: {log.error}"[:60])
            continue
        for i, op in enumerate(log.ops):
            note = ""
            if op.op_type in log.fell_back and op.device.startswith("CPU"):
                note = "[yellow]fell back to the CPU[/yellow]"
            elif op.off_target:
                note = "[yellow]off the pinned device[/yellow]"
            ops.add_row(log.target if i == 0 else "", op.op_type, op.device, str(op.count), note)
        if log.copies:
            ops.add_row("", "(copies)", "", str(log.copies), "tensors sent between devices")
    return ops
