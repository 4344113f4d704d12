"""A multi-worker job in the terminal (rich, at most 100 columns) and as an HTML section.

Computed by :func:`tfres.jobs.merge.job_report`; rendered here.
"""

from __future__ import annotations

from html import escape
from typing import Any

from rich.markup import escape as esc
from rich.table import Table

from tfres.jobs.merge import JobReport, step_time_text
from tfres.report.charts import figure_to_svg, mpl_text, new_figure
from tfres.units import format_bytes, format_seconds

__all__ = ["render_job_report", "render_job_html"]


def render_job_report(report: JobReport, console: Any) -> None:
    """Print the job's workers, the straggler and its reasons (at most 100 columns)."""
    title = f"job {esc(report.job or '(unnamed)')}: {len(report.workers)} workers"
    table = Table(title=title, title_justify="left")
    hosts = {w.host for w in report.workers}
    has_sync = any(w.sync_median_seconds is not None for w in report.workers)
    columns = (
        ["worker"]
        + (["host"] if len(hosts) > 1 else [])
        + ["start", "took", "steps", "step", "input"]
    )
    columns += (["sync"] if has_sync else []) + ["CPU", "peak RSS"]
    for col in columns:
        table.add_column(
            col, justify="left" if col in ("worker", "host") else "right", no_wrap=True
        )
    slow = report.straggler.worker if report.straggler else None
    for w in report.workers:
        row = [f"[bold red]{w.worker} slow[/bold red]" if w.worker == slow else str(w.worker)]
        if len(hosts) > 1:
            row.append(esc((w.host or "?")[:20]))
        row += [
            f"+{w.offset_seconds:.1f}s",
            format_seconds(w.elapsed_seconds),
            str(w.steps),
            step_time_text(w.step_median_seconds),
            step_time_text(w.input_wait_median_seconds),
        ]
        if has_sync:
            row.append(step_time_text(w.sync_median_seconds))
        row += [
            "n/a" if w.process_cpu_mean_percent is None else f"{w.process_cpu_mean_percent:.0f}%",
            format_bytes(w.peak_rss_bytes),
        ]
        table.add_row(*row)
    console.print(table)
    where = f"on host {esc(next(iter(hosts)) or '?')}; " if len(hosts) == 1 else ""
    console.print(
        f"[dim]{where}step and input: medians; step = the worker's own work (its input and "
        "compute, without waiting for the others)[/dim]"
    )
    style = "bold red" if report.straggler else "bold green"
    console.print(f"[{style}]{esc(report.verdict)}[/{style}]")
    if report.straggler:
        for reason in report.straggler.reasons:
            console.print(f"  - {esc(reason)}")
        if not report.straggler.reasons:
            console.print("  - no cause found in its steps, samples or environment")
    for note in report.notes:
        console.print(f"[dim]note: {esc(note)}[/dim]")


def render_job_html(report: JobReport) -> str:
    """The job as an HTML ``<section>``: the workers table, the straggler, and a chart of
    each worker's step times on the job's timeline (inline SVG; every string escaped)."""
    rows = []
    slow = report.straggler.worker if report.straggler else None
    for w in report.workers:
        mark = ' class="straggler"' if w.worker == slow else ""
        cells = [
            str(w.worker),
            w.host or "",
            f"+{w.offset_seconds:.1f} s",
            str(w.steps),
            step_time_text(w.step_median_seconds),
            step_time_text(w.input_wait_median_seconds),
            "n/a" if w.process_cpu_mean_percent is None else f"{w.process_cpu_mean_percent:.0f}%",
            format_bytes(w.peak_rss_bytes),
        ]
        rows.append(f"<tr{mark}>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    head = "".join(
        f"<th>{h}</th>"
        for h in ("worker", "host", "start", "steps", "step", "input", "CPU", "peak RSS")
    )
    reasons = "".join(
        f"<li>{escape(r)}</li>" for r in (report.straggler.reasons if report.straggler else ())
    )
    notes = "".join(f"<li>{escape(n)}</li>" for n in report.notes)
    chart = _steps_chart_svg(report)
    return (
        f'<section class="job"><h2>job {escape(report.job or "(unnamed)")}</h2>'
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f"<p><strong>{escape(report.verdict)}</strong></p>"
        + (f"<ul>{reasons}</ul>" if reasons else "")
        + chart
        + (f'<ul class="notes">{notes}</ul>' if notes else "")
        + "</section>"
    )


def _steps_chart_svg(report: JobReport) -> str:
    if not report.steps:
        return ""
    fig, ax = new_figure(height=2.6)
    for w in report.workers:
        points = [
            (s["t_seconds"], s.get("duration_seconds"))
            for s in report.steps
            if s["worker"] == w.worker
        ]
        points = [(t, d * 1e3) for t, d in points if isinstance(d, (int, float))]
        if points:
            label = mpl_text(
                f"worker {w.worker}"
                + (
                    " (straggler)"
                    if report.straggler and report.straggler.worker == w.worker
                    else ""
                )
            )
            ax.plot([p[0] for p in points], [p[1] for p in points], marker=".", lw=1, label=label)
    ax.set_xlabel("seconds since the first worker started", fontsize=8)
    ax.set_ylabel("step (ms)", fontsize=8)
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.25, lw=0.5)
    return figure_to_svg(fig, title="step time per worker")
