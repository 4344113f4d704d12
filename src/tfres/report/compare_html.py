"""``tfres compare --html``: a self-contained page with the explanation, the environment
diff, the workload table and the two timelines overlaid per workload.

The page works offline: the charts are matplotlib figures inlined as SVG, the style is
inline, there is no script. Every string that comes from a record is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from tfres.comparison.compare import Comparison, Pattern, WorkloadDiff
from tfres.record import Record
from tfres.report.charts import figure_to_svg, mpl_text
from tfres.timeline import Sample
from tfres.units import format_bytes, format_seconds

__all__ = ["render_compare_html", "MAX_TIMELINES"]

#: Overlaid timelines drawn at most (bench records hold a dozen workload rows).
MAX_TIMELINES = 12
_COLORS = {"A": "#1f77b4", "B": "#d62728"}

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;
max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}
th,td{border:1px solid #ddd;padding:.3em .6em;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.slower{color:#b00020;font-weight:600}.faster{color:#1b7f3b;font-weight:600}
.side{display:inline-block;width:1.4em;font-weight:700}.a{color:#1f77b4}.b{color:#d62728}
ul.explain li{margin:.4em 0}.note{color:#666;font-size:.9em}
figure{margin:1em 0}figcaption{font-weight:600;margin-bottom:.3em}
details summary{cursor:pointer;color:#444}svg.chart{width:100%;height:auto}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _series(samples: Sequence[Sample], span: tuple[float, float] | None) -> dict[str, list[float]]:
    start, end = span if span else (float("-inf"), float("inf"))
    inside = [s for s in samples if start <= s.t_seconds <= end]
    t0 = span[0] if span else (inside[0].t_seconds if inside else 0.0)
    out: dict[str, list[float]] = {"t": [], "cpu": [], "t_rss": [], "rss": []}
    for s in inside:
        if s.process_cpu_percent is not None:
            out["t"].append(s.t_seconds - t0)
            out["cpu"].append(s.process_cpu_percent)
        if s.process_rss_bytes:
            out["t_rss"].append(s.t_seconds - t0)
            out["rss"].append(s.process_rss_bytes / 2**20)
    return out


def _timeline(title: str, a: Record, b: Record, pa: Pattern, pb: Pattern) -> str | None:
    from matplotlib.figure import Figure

    sa, sb = _series(a.samples, pa.span), _series(b.samples, pb.span)
    if not (sa["t"] or sb["t"]):
        return None
    fig = Figure(figsize=(10.0, 3.0), layout="constrained")
    ax_cpu, ax_mem = fig.subplots(1, 2)
    for side, s in (("A", sa), ("B", sb)):
        if s["t"]:
            ax_cpu.plot(s["t"], s["cpu"], color=_COLORS[side], label=side, linewidth=1.3)
        if s["t_rss"]:
            ax_mem.plot(s["t_rss"], s["rss"], color=_COLORS[side], label=side, linewidth=1.3)
    ax_cpu.set_title(f"{mpl_text(title)}: CPU of the run (100% = one core)", fontsize=9)
    ax_mem.set_title(f"{mpl_text(title)}: resident memory (MiB)", fontsize=9)
    for ax in (ax_cpu, ax_mem):
        ax.set_xlabel("seconds from start", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    ax_cpu.set_ylim(bottom=0)
    ax_mem.set_ylim(bottom=0)
    return figure_to_svg(fig, title=f"{title}: A and B overlaid")


def _ratio_cell(x: float | None, *, higher_is_slower: bool = True) -> str:
    if x is None:
        return '<td class="num">n/a</td>'
    slower = x >= 1.25 if higher_is_slower else x <= 0.8
    faster = x <= 0.8 if higher_is_slower else x >= 1.25
    cls = "slower" if slower else "faster" if faster else ""
    return f'<td class="num {cls}">{x:.2f}x</td>'


def _cpu(p: Pattern) -> str:
    if p.process_cpu_mean_percent is None:
        return "n/a"
    p95 = "" if p.process_cpu_p95_percent is None else f" / {p.process_cpu_p95_percent:.0f}"
    return f"{p.process_cpu_mean_percent:.0f}{p95}%"


def _gpu(p: Pattern) -> str:
    return "n/a" if p.gpu_util_mean_percent is None else f"{p.gpu_util_mean_percent:.0f}%"


def _workload_table(rows: Sequence[WorkloadDiff]) -> str:
    head = (
        "<tr><th>workload</th><th>device</th><th>A time</th><th>B time</th><th>B/A time</th>"
        "<th>B/A throughput</th><th>A CPU mean / p95</th><th>B CPU mean / p95</th>"
        "<th>A GPU util</th><th>B GPU util</th><th>A peak memory</th><th>B peak memory</th></tr>"
    )
    body = []
    for w in rows:
        note = f'<div class="note">{_e(w.note)}</div>' if w.note else ""
        body.append(
            f"<tr><td>{_e(w.title)}{note}</td><td>{_e(w.device)}</td>"
            f'<td class="num">{_e(format_seconds(w.a.seconds))}</td>'
            f'<td class="num">{_e(format_seconds(w.b.seconds))}</td>'
            f"{_ratio_cell(w.time_ratio)}{_ratio_cell(w.throughput_ratio, higher_is_slower=False)}"
            f'<td class="num">{_e(_cpu(w.a))}</td><td class="num">{_e(_cpu(w.b))}</td>'
            f'<td class="num">{_e(_gpu(w.a))}</td><td class="num">{_e(_gpu(w.b))}</td>'
            f'<td class="num">{_e(format_bytes(w.a.peak_memory_bytes))}</td>'
            f'<td class="num">{_e(format_bytes(w.b.peak_memory_bytes))}</td></tr>'
        )
    return f"<table>{head}{''.join(body)}</table>"


def _env_table(c: Comparison) -> str:
    rows = "".join(
        f"<tr><td>{_e(i.label)}</td><td>{_e(i.a or 'not recorded')}</td>"
        f"<td>{_e(i.b or 'not recorded')}</td></tr>"
        for i in c.changed
    )
    changed = (
        f"<table><tr><th>what</th><th>A</th><th>B</th></tr>{rows}</table>"
        if rows
        else "<p>No differences in what both records hold.</p>"
    )
    same = c.unchanged
    folded = ""
    if same:
        inner = "".join(f"<tr><td>{_e(i.label)}</td><td>{_e(i.a)}</td></tr>" for i in same)
        folded = (
            f"<details><summary>{len(same)} unchanged item(s)</summary>"
            f"<table><tr><th>what</th><th>A and B</th></tr>{inner}</table></details>"
        )
    return changed + folded


def render_compare_html(c: Comparison, a: Record, b: Record) -> str:
    """The comparison ``c`` of records ``a`` and ``b`` as one self-contained HTML page."""
    refs = "".join(
        f'<p><span class="side {side.lower()}">{side}</span>{_e(ref.id)}'
        f"{' &ldquo;' + _e(ref.label) + '&rdquo;' if ref.label else ''} on "
        f"{_e(ref.host or 'unknown host')} "
        f"({_e(ref.kind)}, {_e(ref.created_at)}, tfres {_e(ref.tfres_version)}, "
        f"{_e(ref.status)})</p>"
        for side, ref in (("A", c.a), ("B", c.b))
    )
    if c.explanations:
        explain = "".join(f"<li>{_e(e.text)}</li>" for e in c.explanations)
        explain = f'<ul class="explain">{explain}</ul>'
    else:
        explain = "<p>No workload or run timing differs by more than 1.25x.</p>"
    rows = list(c.workloads) + ([c.run] if c.run else [])
    table = _workload_table(rows) if rows else "<p>The records share no workload.</p>"
    only = "".join(
        f"<p>Only in {side}: {_e(', '.join(names))}</p>"
        for side, names in (("A", c.only_in_a), ("B", c.only_in_b))
        if names
    )
    figures = []
    for w in rows[:MAX_TIMELINES]:
        svg = _timeline(w.title, a, b, w.a, w.b)
        if svg:
            figures.append(
                f"<figure><figcaption>{_e(w.title)} ({_e(w.device)})</figcaption>{svg}</figure>"
            )
    timelines = "".join(figures) or "<p>No timeline samples to draw.</p>"
    notes = "".join(f'<p class="note">{_e(n)}</p>' for n in c.notes)
    title = f"tfres compare: {c.a.name} vs {c.b.name}"
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_CSS}</style></head>"
        f"<body><h1>{_e(title)}</h1>{refs}"
        f"<h2>Why they differ</h2>{explain}"
        f"<h2>Environment</h2>{_env_table(c)}"
        f"<h2>Workloads</h2><p class=note>Ratios are B over A: above 1 means B took longer. "
        f"CPU is that of the watched processes, 100% = one core.</p>{table}{only}"
        "<h2>Timelines</h2><p class=note>Each workload's span on both records, overlaid from its "
        "start "
        f'(<span class="a">A</span>, <span class="b">B</span>).</p>{timelines}'
        f"<h2>Notes</h2>{notes or '<p class=note>none</p>'}"
        "</body></html>\n"
    )
