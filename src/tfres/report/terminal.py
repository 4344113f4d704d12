"""A record printed in the terminal with rich (at most 100 columns)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from tfres.record import Record
from tfres.units import format_bytes, format_seconds

__all__ = ["render_record"]


def render_record(record: Record, console: Console) -> None:
    """Print the header of ``record``, its timeline summary, workloads and findings."""
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("run", f"{record.id} ({record.kind})")
    if record.label:
        head.add_row("label", record.label)
    if record.command:
        head.add_row("command", " ".join(record.command))
    head.add_row("host", record.host or "unknown")
    head.add_row("started", record.started_at or "n/a")
    head.add_row("took", format_seconds(record.elapsed_seconds))
    status = record.status
    if record.exit_code is not None:
        status += f" (exit {record.exit_code})"
    if record.end_reason:
        status += f": {record.end_reason}"
    head.add_row("status", status)
    if record.samples:
        peak_rss = max((s.process_rss_bytes or 0) for s in record.samples)
        cpu = [s.process_cpu_percent for s in record.samples if s.process_cpu_percent is not None]
        head.add_row("samples", f"{len(record.samples)} every {record.interval_seconds} s")
        head.add_row("peak RSS", format_bytes(peak_rss))
        if cpu:
            head.add_row("process CPU", f"mean {sum(cpu) / len(cpu):.0f}%, max {max(cpu):.0f}%")
    console.print(head)
    for note in record.notes:
        console.print(f"[dim]note: {note}[/dim]")
