"""A record printed in the terminal with rich, at most 100 columns wide.

    from tfres.cli._common import console
    render_record(record, console())

Strings from the record are printed as plain text (never read as rich markup), so a label
like ``[red]x[/red]`` shows as typed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tfres.record import Record
from tfres.report import _format as fmt
from tfres.units import format_bytes, format_percent, format_seconds
from tfres.watch.profile import breakdown_line

__all__ = [
    "findings_view",
    "phase_table",
    "render_bench_summary",
    "render_record",
    "render_run_summary",
    "workload_notes",
    "workload_table",
]

SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def _header(record: Record) -> Table:
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold", no_wrap=True)
    head.add_column(overflow="fold")
    head.add_row("run", Text(f"{record.id} ({record.kind})"))
    if record.label:
        head.add_row("label", Text(record.label))
    if record.command:
        head.add_row("command", Text(" ".join(record.command)))
    if record.job:
        head.add_row("job", Text(f"{record.job}, worker {record.worker}"))
    head.add_row("host", Text(record.host or "unknown"))
    machine = fmt.machine_summary(record.fingerprint or {})
    if machine:
        head.add_row("machine", Text(machine))
    head.add_row("started", Text(record.started_at or "n/a"))
    head.add_row("took", format_seconds(record.elapsed_seconds))
    status = record.status
    if record.exit_code is not None:
        status += f" (exit {record.exit_code})"
    if record.signal:
        status += f" ({record.signal})"
    if record.end_reason:
        status += f": {record.end_reason}"
    head.add_row("status", Text(status, style="green" if record.status == "ok" else "red"))
    if record.samples:
        peak_rss = max((s.process_rss_bytes or 0) for s in record.samples)
        cpu = [s.process_cpu_percent for s in record.samples if s.process_cpu_percent is not None]
        head.add_row("samples", f"{len(record.samples)} every {record.interval_seconds} s")
        head.add_row("peak RSS", format_bytes(peak_rss))
        if cpu:
            head.add_row("process CPU", f"mean {sum(cpu) / len(cpu):.0f}%, max {max(cpu):.0f}%")
    return head


def workload_table(
    workloads: Sequence[dict[str, Any]], *, title: str | None = "workloads"
) -> Table:
    """The summary table of workload results: fits 100 columns.

    Columns: workload, device, time (median per repeat and spread), throughput, the run's
    CPU (100% = one core), GPU utilization, peak RSS / peak of TensorFlow's allocator.
    """
    table = Table(title=title, title_justify="left", expand=False, pad_edge=False)
    table.add_column("workload", overflow="fold", max_width=24)
    table.add_column("device", no_wrap=True)
    table.add_column("time", justify="right", no_wrap=True)
    table.add_column("throughput", justify="right", overflow="fold", max_width=18)
    table.add_column("CPU", justify="right", no_wrap=True)
    table.add_column("GPU", justify="right", no_wrap=True)
    table.add_column("RSS / TF peak", justify="right", no_wrap=True)
    for w in workloads:
        style = "red" if w.get("error") else None
        table.add_row(
            Text(fmt.workload_label(w)),
            Text(str(w.get("device"))),
            fmt.time_spread(w),
            Text(fmt.throughput(w)),
            fmt.run_cpu(w),
            fmt.device_util(w),
            fmt.peak_memory_compact(w),
            style=style,
        )
    return table


def workload_notes(workloads: Sequence[dict[str, Any]]) -> list[Text]:
    lines: list[Text] = []
    seen: set[str] = set()
    for w in workloads:
        d = w.get("details") or {}
        where = f"{w.get('name')} {w.get('device')}"
        if w.get("error") and "skipped" not in str(w.get("error")):
            lines.append(Text(f"{fmt.workload_label(w)} {w.get('device')}: {w['error']}", "red"))
        if d.get("fraction_of_peak") is not None:
            peak = d.get("peak_gflops")
            lines.append(
                Text(
                    f"{fmt.workload_label(w)}: {d['fraction_of_peak']:.0%} of the estimated peak"
                    f" ({peak:.0f} GFLOP/s)"
                )
            )
        verdict = d.get("verdict")
        if verdict and f"{where}{verdict}" not in seen:
            seen.add(f"{where}{verdict}")
            lines.append(Text(f"{where}: {verdict}"))
    for w in workloads:
        how = (w.get("details") or {}).get("peak_estimate")
        if how:
            lines.append(Text(f"peak estimate: {how}", "dim"))
            break
    return lines


def phase_table(record: Record) -> Table | None:
    """Per phase: when, how long, the run's and the machine's CPU, peak RSS, GPU use."""
    rows = fmt.phase_summary(record)
    if not rows:
        return None
    table = Table(title="phases", title_justify="left", expand=False, pad_edge=False)
    table.add_column("phase", overflow="fold", max_width=30)
    table.add_column("start", justify="right", no_wrap=True)
    table.add_column("took", justify="right", no_wrap=True)
    table.add_column("run CPU", justify="right", no_wrap=True)
    table.add_column("machine CPU", justify="right", no_wrap=True)
    table.add_column("peak RSS", justify="right", no_wrap=True)
    table.add_column("GPU", justify="right", no_wrap=True)
    for r in rows:
        table.add_row(
            Text(r["name"]),
            f"{r['start_seconds']:.1f} s",
            format_seconds(r["duration_seconds"]),
            format_percent(r["process_cpu_percent_mean"]),
            format_percent(r["cpu_percent_mean"]),
            format_bytes(r["peak_rss_bytes"]),
            format_percent(r["gpu_util_percent_mean"]),
        )
    return table


def findings_view(findings: Sequence[dict[str, Any]]) -> list[Text]:
    """The findings as text blocks: severity and title, then evidence, cause and fix."""
    order = {"critical": 0, "warning": 1, "info": 2}
    blocks = []
    for f in sorted(findings, key=lambda f: order.get(str(f.get("severity")), 3)):
        sev = str(f.get("severity") or "info")
        block = Text()
        block.append(f"{sev.upper()} ", style=SEVERITY_STYLE.get(sev, "bold"))
        block.append(str(f.get("title") or f.get("rule")), style="bold")
        for key in ("evidence", "cause", "fix"):
            if f.get(key):
                block.append(f"\n  {key}: ", style="dim")
                block.append(str(f[key]))
        blocks.append(block)
    return blocks


def render_record(record: Record, console: Console) -> None:
    """Print ``record``: header, workload table, per-phase summary, findings and notes."""
    console.print(_header(record))
    if record.workloads:
        console.print()
        console.print(workload_table(record.workloads))
        for line in workload_notes(record.workloads):
            console.print(line)
    table = phase_table(record)
    if table is not None:
        console.print()
        console.print(table)

    breakdown = breakdown_line(record.extra.get("profile"))
    if breakdown:
        console.print(Text(f"step breakdown (profiler): {breakdown}"))
    if record.findings:
        console.print()
        console.print(Text(f"findings ({len(record.findings)})", style="bold"))
        for block in findings_view(record.findings):
            console.print(block)
    elif record.samples:
        console.print()
        console.print(Text("findings: none; the diagnosis rules found nothing to flag", "dim"))
    for note in record.notes:
        console.print(Text(f"note: {note}", style="dim"))


def render_bench_summary(
    record: Record,
    console: Console,
    *,
    store_number: int | None = None,
    store_path: Any = None,
    html_path: Any = None,
) -> None:
    """Print what ``tfres bench`` found: the workload table, findings, notes, and where the
    record (store number) and the HTML report went."""
    console.print(
        workload_table(
            record.workloads,
            title=f"tfres bench: {len(record.workloads)} results"
            f" in {format_seconds(record.elapsed_seconds)}",
        )
    )
    for line in workload_notes(record.workloads):
        console.print(line)
    if record.findings:
        console.print()
        for block in findings_view(record.findings):
            console.print(block)
    for note in record.notes:
        console.print(Text(f"note: {note}", style="dim"))
    console.print()
    if store_number is not None:
        console.print(
            Text(
                f"saved as run {store_number} in {store_path}; "
                f"show it again: tfres report {store_number}"
            )
        )
    if html_path is not None:
        console.print(Text(f"HTML report: {html_path}"))


def render_run_summary(
    record: Record, *, store_number: int | None = None, store_error: str | None = None
) -> Table:
    """What ``tfres run`` prints when the command ends: how it ended, the CPU, memory and GPU
    it used, the top findings and notes, and where the record went."""
    samples = record.samples
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    status = record.status
    if record.signal:
        status += f" ({record.signal})"
    elif record.exit_code is not None:
        status += f" (exit {record.exit_code})"
    grid.add_row("tfres run", f"{status}, took {format_seconds(record.elapsed_seconds)}")
    if record.end_reason:
        grid.add_row("why", record.end_reason)
    for name, value in _run_usage(samples):
        grid.add_row(name, value)
    grid.add_row("samples", f"{len(samples)} every {format_seconds(record.interval_seconds)}")
    for finding in record.findings[:3]:
        grid.add_row(str(finding.get("severity", "")), str(finding.get("title", "")))
    for note in record.notes[:3]:
        grid.add_row("note", note)
    if store_number is not None:
        grid.add_row("saved", f"run {store_number}: tfres show {store_number}")
    if store_error:
        grid.add_row("not saved", store_error)
    return grid


def _run_usage(samples: Sequence[Any]) -> list[tuple[str, str]]:
    """The summary's CPU, peak RSS and GPU rows; a figure no sample read is left out."""
    rows = []
    cpu = [s.process_cpu_percent for s in samples if s.process_cpu_percent is not None]
    rss = [s.process_rss_bytes for s in samples if s.process_rss_bytes is not None]
    gpu_util = [g.util_percent for s in samples for g in s.gpus if g.util_percent is not None]
    if cpu:
        rows.append(("CPU", f"mean {sum(cpu) / len(cpu):.0f}%, max {max(cpu):.0f}% of one core"))
    if rss:
        rows.append(("peak RSS", format_bytes(max(rss))))
    if gpu_util:
        rows.append(("GPU util", f"mean {sum(gpu_util) / len(gpu_util):.0f}%"))
    return rows
