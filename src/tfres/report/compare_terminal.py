"""A :class:`~tfres.comparison.compare.Comparison` in the terminal with rich (<= 100 columns)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tfres.comparison.compare import Comparison, Pattern, RunRef, WorkloadDiff
from tfres.units import format_seconds

__all__ = ["render_comparison"]


def _ref(side: str, ref: RunRef) -> str:
    parts = [ref.id]
    if ref.label:
        parts.append(repr(ref.label))
    parts.append(f"on {ref.host or 'unknown host'}")
    parts.append(
        f"({ref.kind}, {ref.created_at.replace('T', ' ').rstrip('Z')}, tfres {ref.tfres_version})"
    )
    return f"[bold]{side}[/bold]  " + escape(" ".join(parts))


def _ratio(x: float | None) -> str:
    if x is None:
        return "n/a"
    style = "red" if x >= 1.25 else "green" if x <= 0.8 else ""
    text = f"{x:.2f}x"
    return f"[{style}]{text}[/{style}]" if style else text


def _cpu(p: Pattern) -> str:
    return "n/a" if p.process_cpu_mean_percent is None else f"{p.process_cpu_mean_percent:.0f}%"


def _row(w: WorkloadDiff) -> list[str]:
    return [
        escape(w.title if w.device == "host" else f"{w.title} ({w.device})"),
        format_seconds(w.a.seconds),
        format_seconds(w.b.seconds),
        _ratio(w.time_ratio),
        _cpu(w.a),
        _cpu(w.b),
        _ratio(w.memory_ratio),
    ]


def render_comparison(c: Comparison, console: Console, *, show_unchanged: bool = False) -> None:
    """Print the explanation, the environment diff (unchanged items folded) and the
    per-workload table of ``c``; every string from the records is escaped."""
    console.print(_ref("A", c.a))
    console.print(_ref("B", c.b))
    console.print()
    console.print("[bold]Why they differ[/bold]")
    if c.explanations:
        for e in c.explanations:
            console.print(f" • {escape(e.text)}")
    else:
        console.print(" • no workload or run timing differs by more than 1.25x")
    console.print()

    changed = c.changed
    table = Table(
        title=f"Environment: {len(changed)} difference(s)", title_justify="left", expand=False
    )
    table.add_column("what", overflow="fold", max_width=26)
    table.add_column("A", overflow="fold", max_width=34)
    table.add_column("B", overflow="fold", max_width=34)
    for item in changed:
        table.add_row(
            escape(item.label), escape(item.a or "not recorded"), escape(item.b or "not recorded")
        )
    for item in c.unchanged if show_unchanged else []:
        table.add_row(
            f"[dim]{escape(item.label)}[/dim]",
            f"[dim]{escape(item.a or '')}[/dim]",
            "[dim]same[/dim]",
        )
    if changed or show_unchanged:
        console.print(table)
    else:
        console.print("[bold]Environment:[/bold] no differences")
    if c.unchanged and not show_unchanged:
        names = ", ".join(item.label for item in c.unchanged)
        console.print(f"[dim]{len(c.unchanged)} unchanged: {escape(names)}[/dim]")
    console.print()

    rows = list(c.workloads) + ([c.run] if c.run else [])
    if rows:
        t = Table(title="Workloads (B/A: above 1 means B is slower)", title_justify="left")
        t.add_column("workload", min_width=18, overflow="fold")
        for col in ("A time", "B time", "time B/A", "A CPU", "B CPU", "memory B/A"):
            t.add_column(col, justify="right", no_wrap=True)
        for w in rows:
            t.add_row(*_row(w))
        console.print(t)
        console.print("[dim]CPU: mean of the watched processes, 100% = one core[/dim]")
    if c.only_in_a:
        console.print("only in A: " + escape(", ".join(c.only_in_a)))
    if c.only_in_b:
        console.print("only in B: " + escape(", ".join(c.only_in_b)))
    for note in c.notes:
        console.print(f"[dim]note: {escape(note)}[/dim]")
