"""Charts of a record, drawn by matplotlib and turned into inline SVG for HTML reports.

Every chart is a :class:`matplotlib.figure.Figure` made without pyplot (no global state,
safe in any thread); :func:`figure_to_svg` turns it into an ``<svg>`` element that works
offline, with its ids made unique so many charts can share one page. Reusable pieces:

    fig, ax = new_figure(height=2.5)
    ax.plot(t, values)
    shade_phases(ax, record.phases, record.marks)
    html_fragment = figure_to_svg(fig)

Strings from a record go through :func:`mpl_text` (so a ``$`` is not read as math);
matplotlib's SVG writer escapes ``<``, ``>`` and ``&`` in every text it writes.
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from tfres.record import Record
from tfres.timeline import Mark, Phase, Sample

__all__ = [
    "batch_sweep_chart",
    "cpu_chart",
    "figure_to_svg",
    "gpu_chart",
    "memory_chart",
    "mpl_text",
    "new_figure",
    "shade_phases",
]

GIB = 1024**3
PHASE_COLORS = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2")
_ids = itertools.count(1)


def mpl_text(text: object) -> str:
    """A record string made safe for matplotlib text: ``$`` shown as is, never as math."""
    return str(text).replace("$", r"\$")


def new_figure(*, height: float = 2.6, width: float = 10.0, rows: int = 1, **kw: Any) -> Any:
    """A pyplot-free figure with ``rows`` axes sharing x: ``(fig, ax)``, or ``(fig, axes)``."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(rows, 1, sharex=True, squeeze=True, **kw)
    return fig, axes


def figure_to_svg(fig: Any, *, title: str | None = None, id_prefix: str | None = None) -> str:
    """The figure as one ``<svg>`` element for an HTML page: no XML prolog, unique ids.

    Every id in the SVG gets ``id_prefix`` (default: a new ``cN-`` per call), so several
    charts can share a page; give each chart of a page its own prefix for a page that is
    the same byte for byte each time. Text is kept as SVG text (``svg.fonttype = none``) so
    it stays sharp and searchable; ``title`` becomes the SVG's accessible title (escaped).
    """
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "tfres"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    prefix = id_prefix if id_prefix is not None else f"c{next(_ids)}-"
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    if ids:
        pattern = re.compile(
            r'(\bid="|href="#|url\(#)(' + "|".join(map(re.escape, ids)) + r')(["\)])'
        )
        svg = pattern.sub(lambda m: f"{m.group(1)}{prefix}{m.group(2)}{m.group(3)}", svg)
    svg = re.sub(r'<svg ([^>]*?)width="[^"]*" height="[^"]*"', r"<svg \1", svg, count=1)
    svg = svg.replace("<svg ", '<svg class="chart" role="img" ', 1)
    if title:
        from html import escape

        svg = re.sub(
            r"(<svg[^>]*>)", lambda m: f"{m.group(1)}<title>{escape(title)}</title>", svg, count=1
        )
    return svg


def shade_phases(
    ax: Any,
    phases: Sequence[Phase],
    marks: Sequence[Mark] = (),
    *,
    labels: bool = True,
    end_seconds: float | None = None,
) -> None:
    """Shade each phase (a workload, an epoch) on ``ax`` and draw each mark as a dashed line.

    Phase names are written at the top of their span when it is wide enough to hold them.
    """
    lo, hi = ax.get_xlim()
    width = max(hi - lo, 1e-9)
    for i, phase in enumerate(phases):
        end = phase.end_seconds if phase.end_seconds is not None else (end_seconds or hi)
        color = PHASE_COLORS[i % len(PHASE_COLORS)]
        ax.axvspan(phase.start_seconds, end, color=color, alpha=0.12, lw=0)
        if labels and (end - phase.start_seconds) / width > 0.06:
            ax.text(
                phase.start_seconds + width * 0.004,
                0.97,
                mpl_text(phase.name),
                transform=ax.get_xaxis_transform(),
                va="top",
                ha="left",
                fontsize=7,
                color=color,
                clip_on=True,
            )
    for mark in marks:
        ax.axvline(mark.t_seconds, color="#555555", lw=0.8, ls="--")
        if labels:
            ax.text(
                mark.t_seconds,
                0.03,
                " " + mpl_text(mark.label),
                transform=ax.get_xaxis_transform(),
                rotation=90,
                va="bottom",
                ha="left",
                fontsize=7,
                color="#333333",
                clip_on=True,
            )
    ax.set_xlim(lo, hi)


def _series(
    samples: Iterable[Sample], attr: str, scale: float = 1.0
) -> tuple[list[float], list[float]]:
    t, v = [], []
    for s in samples:
        value = getattr(s, attr)
        if value is not None:
            t.append(s.t_seconds)
            v.append(value / scale)
    return t, v


def _aggregate_series(
    record: Record, column: str, scale: float = 1.0
) -> tuple[list[float], list[float]]:
    t, v = [], []
    for bucket in record.aggregates:
        value = (bucket.get("mean") or {}).get(column)
        if value is not None:
            t.append((bucket["start_seconds"] + bucket["end_seconds"]) / 2)
            v.append(value / scale)
    return t, v


def _finish_axes(ax: Any, record: Record, ylabel: str) -> None:
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=8)
    ax.grid(True, alpha=0.25, lw=0.5)
    end = record.elapsed_seconds or (record.samples[-1].t_seconds if record.samples else 1.0)
    start = record.aggregates[0]["start_seconds"] if record.aggregates else 0.0
    ax.set_xlim(start, max(end, start + 1e-3))


def cpu_chart(record: Record) -> Any | None:
    """System and run CPU over time, above a heatmap of every core; None without samples."""
    samples = record.samples
    if not samples:
        return None
    cores = max(len(s.cpu_per_core_percent) for s in samples)
    fig, (ax, heat) = new_figure(
        height=2.4 + min(cores, 32) * 0.12 + 0.6,
        rows=2,
        gridspec_kw={"height_ratios": [2, max(1, min(cores, 32) / 6)]},
    )
    t, v = _series(samples, "cpu_percent")
    ax.plot(t, v, lw=1.2, color="#4c78a8", label="whole machine")
    logical = cores or 1
    t2, v2 = _series(samples, "process_cpu_percent", scale=logical)
    if v2:
        ax.plot(t2, v2, lw=1.2, color="#e45756", label="this run")
    at, av = _aggregate_series(record, "cpu_percent")
    if av:
        ax.plot(at, av, lw=1, ls=":", color="#4c78a8", label="whole machine (10 s means)")
    ax.set_ylim(0, 105)
    _finish_axes(ax, record, "CPU % of all cores")
    shade_phases(ax, record.phases, record.marks)
    ax.legend(loc="upper right", fontsize=7, framealpha=0.8)
    if cores:
        import numpy as np

        grid = np.full((cores, len(samples)), np.nan)
        for j, s in enumerate(samples):
            for i, value in enumerate(s.cpu_per_core_percent):
                grid[i, j] = value
        t0, t1 = samples[0].t_seconds, samples[-1].t_seconds
        image = heat.imshow(
            grid,
            aspect="auto",
            origin="lower",
            cmap="viridis",
            vmin=0,
            vmax=100,
            interpolation="nearest",
            extent=(t0, max(t1, t0 + 1e-3), -0.5, cores - 0.5),
        )
        heat.set_ylabel("core", fontsize=8)
        heat.tick_params(labelsize=8)
        if cores <= 16:
            heat.set_yticks(range(cores))
        fig.colorbar(image, ax=heat, label="%", pad=0.01, aspect=10)
        shade_phases(heat, [], record.marks, labels=False)
    else:
        heat.set_visible(False)
    heat.set_xlabel("seconds", fontsize=8)
    return fig


def memory_chart(record: Record) -> Any | None:
    """Host memory in use, the run's RSS and TensorFlow's allocator over time."""
    samples = record.samples
    if not samples:
        return None
    fig, ax = new_figure(height=2.6)
    t, v = _series(samples, "memory_used_bytes", GIB)
    if v:
        ax.plot(t, v, lw=1.2, color="#4c78a8", label="machine in use")
    t, v = _series(samples, "process_rss_bytes", GIB)
    if v:
        ax.plot(t, v, lw=1.2, color="#e45756", label="this run (RSS)")
    devices = sorted({d for s in samples for d in (s.tf_memory or {})})
    for i, device in enumerate(devices):
        in_use = [
            (s.t_seconds, s.tf_memory[device].get("current_bytes"))
            for s in samples
            if device in (s.tf_memory or {})
        ]
        points = [(a, b / GIB) for a, b in in_use if b is not None]
        if points:
            ax.plot(
                *zip(*points, strict=True),
                lw=1,
                ls="--",
                color=PHASE_COLORS[(i + 2) % 6],
                label=f"TensorFlow {mpl_text(device)}",
            )
    at, av = _aggregate_series(record, "process_rss_bytes", GIB)
    if av:
        ax.plot(at, av, lw=1, ls=":", color="#e45756", label="RSS (10 s means)")
    ax.set_ylim(bottom=0)
    _finish_axes(ax, record, "GiB")
    shade_phases(ax, record.phases, record.marks)
    ax.legend(loc="upper left", fontsize=7, framealpha=0.8)
    ax.set_xlabel("seconds", fontsize=8)
    return fig


def gpu_chart(record: Record) -> Any | None:
    """Utilization and memory of each GPU over time; None when no sample has a GPU."""
    samples = [s for s in record.samples if s.gpus]
    if not samples:
        return None
    indices = sorted({g.index for s in samples for g in s.gpus})
    fig, (util, mem) = new_figure(height=4.4, rows=2)
    for n, index in enumerate(indices):
        color = PHASE_COLORS[n % len(PHASE_COLORS)]
        ut = [
            (s.t_seconds, g.util_percent)
            for s in samples
            for g in s.gpus
            if g.index == index and g.util_percent is not None
        ]
        mt = [
            (s.t_seconds, g.memory_used_bytes / GIB)
            for s in samples
            for g in s.gpus
            if g.index == index and g.memory_used_bytes is not None
        ]
        if ut:
            util.plot(*zip(*ut, strict=True), lw=1.2, color=color, label=f"GPU {index}")
        if mt:
            mem.plot(*zip(*mt, strict=True), lw=1.2, color=color, label=f"GPU {index}")
    util.set_ylim(0, 105)
    _finish_axes(util, record, "utilization %")
    _finish_axes(mem, record, "memory used, GiB")
    mem.set_ylim(bottom=0)
    for ax in (util, mem):
        shade_phases(ax, record.phases, record.marks, labels=ax is util)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper right", fontsize=7)
    mem.set_xlabel("seconds", fontsize=8)
    return fig


def batch_sweep_chart(record: Record) -> Any | None:
    """Samples/s and peak memory per batch size, one line per device; None without a sweep."""
    rows = [w for w in record.workloads if w.get("name") == "batch_sweep"]
    if not rows:
        return None
    fig, ax = new_figure(height=3.0)
    mem_ax = ax.twinx()
    devices = list(dict.fromkeys(str(r.get("device")) for r in rows))
    for n, device in enumerate(devices):
        mine = sorted(
            (r for r in rows if str(r.get("device")) == device),
            key=lambda r: (r.get("params") or {}).get("batch_size") or 0,
        )
        _plot_sweep_device(ax, mem_ax, mine, device, PHASE_COLORS[n % len(PHASE_COLORS)])
    _finish_sweep_axes(ax, mem_ax, rows)
    return fig


def _batch_size(row: dict[str, Any]) -> Any:
    return (row.get("params") or {}).get("batch_size")


def _plot_sweep_device(
    ax: Any, mem_ax: Any, mine: list[dict[str, Any]], device: str, color: str
) -> None:
    """One device's rows: samples/s (solid), peak memory (dashed), failed sizes annotated."""
    ok = [(r["params"]["batch_size"], r["throughput"]) for r in mine if r.get("throughput")]
    if ok:
        ax.plot(
            *zip(*ok, strict=True),
            marker="o",
            lw=1.5,
            color=color,
            label=f"samples/s {mpl_text(device)}",
        )
    peaks = [
        (r["params"]["batch_size"], r.get("peak_tf_memory_bytes") or r.get("peak_rss_bytes"))
        for r in mine
    ]
    peaks_mib = [(b, p / 2**20) for b, p in peaks if p]
    if peaks_mib:
        mem_ax.plot(
            *zip(*peaks_mib, strict=True),
            marker="s",
            lw=1,
            ls="--",
            color=color,
            alpha=0.7,
            label=f"peak memory {mpl_text(device)}",
        )
    for r in mine:
        if r.get("error"):
            text = "out of memory" if (r.get("details") or {}).get("out_of_memory") else "not run"
            ax.annotate(
                text,
                (_batch_size(r), 0),
                xytext=(0, 12),
                textcoords="offset points",
                ha="center",
                fontsize=8,
                color="#c0392b",
            )


def _finish_sweep_axes(ax: Any, mem_ax: Any, rows: list[dict[str, Any]]) -> None:
    """Log-2 batch-size axis with the swept sizes as ticks, labels, grid and one legend."""
    ax.set_xscale("log", base=2)
    sizes = sorted({int(b) for r in rows if (b := _batch_size(r)) is not None})
    ax.set_xticks(sizes, [str(b) for b in sizes])
    ax.set_xlabel("batch size", fontsize=8)
    ax.set_ylabel("samples / second", fontsize=8)
    mem_ax.set_ylabel("peak memory, MiB", fontsize=8)
    ax.set_ylim(bottom=0)
    mem_ax.set_ylim(bottom=0)
    for a in (ax, mem_ax):
        a.tick_params(labelsize=8)
    ax.grid(True, alpha=0.25, lw=0.5)
    handles = ax.get_legend_handles_labels()
    mhandles = mem_ax.get_legend_handles_labels()
    if handles[0] or mhandles[0]:
        ax.legend(handles[0] + mhandles[0], handles[1] + mhandles[1], loc="lower right", fontsize=7)
