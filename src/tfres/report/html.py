"""A record as one self-contained HTML page: works offline, no CDN, no JavaScript.

    html = render_html(record)
    write_html(record, "report.html")

The page holds the machine summary, the findings (severity, evidence, cause, fix), the
workload table, timelines of CPU per core, memory and GPU with phases and marks shaded, and
the batch-sweep chart. Charts are matplotlib figures inlined as SVG. Every string that comes
from a record is escaped; a Content-Security-Policy forbids scripts and remote loads anyway.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from html import escape
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from tfres.record import Record, atomic_write_bytes
from tfres.report import _format as fmt
from tfres.report import charts
from tfres.report.charts import figure_to_svg
from tfres.units import format_bytes, format_percent, format_seconds
from tfres.version import __version__
from tfres.watch.profile import breakdown_line

__all__ = ["render_html", "write_html"]

log = logging.getLogger("tfres")


def e(value: object) -> str:
    """Escape any value for HTML text or attributes."""
    return escape("" if value is None else str(value), quote=True)


def _template(name: str) -> str:
    return resources.files("tfres.report").joinpath(f"templates/{name}").read_text(encoding="utf-8")


def _kv(rows: Sequence[tuple[str, object]]) -> str:
    items = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in rows if v not in (None, "", []))
    return f'<dl class="kv">{items}</dl>' if items else '<p class="sub">not recorded</p>'


def _panel(title: str, body: str) -> str:
    return f'<div class="panel"><h3>{e(title)}</h3>{body}</div>'


def _header(record: Record) -> str:
    title = record.label or record.id
    ok = record.status == "ok"
    status = record.status + (f" (exit {record.exit_code})" if record.exit_code is not None else "")
    if record.end_reason:
        status += f": {record.end_reason}"
    rows: list[tuple[str, object]] = [
        ("run", f"{record.id} ({record.kind})"),
        ("label", record.label),
        ("command", " ".join(record.command) if record.command else None),
        ("host", record.host),
        ("machine", fmt.machine_summary(record.fingerprint or {})),
        ("started", record.started_at),
        ("took", format_seconds(record.elapsed_seconds)),
        ("job", f"{record.job} worker {record.worker}" if record.job else None),
    ]
    cls = "status-ok" if ok else "status-bad"
    return (
        f"<h1>tfres {e(record.kind)}: {e(title)}</h1>"
        f'<p class="sub">status <span class="{cls}">{e(status)}</span></p>{_kv(rows)}'
    )


def _machine(fp: Mapping[str, Any]) -> str:
    panels = [
        _host_panel(fp.get("host") or {}),
        _cpu_panel(fp.get("cpu") or {}),
        _memory_panel(fp.get("memory") or {}),
        _gpus_panel(fp.get("gpus") or [], fp.get("gpus_reason")),
        _tensorflow_panel(fp.get("tensorflow") or {}),
        _blas_panel(fp),
    ]
    return "<h2>Machine</h2>" + f'<div class="grid">{"".join(panels)}</div>'


def _host_panel(host: Mapping[str, Any]) -> str:
    rows = [
        ("name", host.get("hostname")),
        ("os", host.get("os")),
        ("kernel", host.get("kernel")),
        ("python", host.get("python")),
        ("container", host.get("in_container")),
    ]
    return _panel("host", _kv(rows))


def _cpu_panel(cpu: Mapping[str, Any]) -> str:
    flags = ", ".join(k for k, v in (cpu.get("isa_flags") or {}).items() if v)
    cores = (
        f"{cpu.get('physical_cores')} physical, {cpu.get('logical_cores')} logical"
        if cpu.get("logical_cores")
        else None
    )
    clock = f"{cpu['frequency_mhz']:.0f} MHz" if cpu.get("frequency_mhz") else None
    rows = [
        ("model", cpu.get("model")),
        ("cores", cores),
        ("usable", cpu.get("usable_cores")),
        ("clock", clock),
        ("vector ISA", flags),
        ("cgroup quota", cpu.get("cgroup_cpu_quota_cores")),
    ]
    return _panel("CPU", _kv(rows))


def _bytes_if(value: Any, *, zero_shown: bool = False) -> str | None:
    """``value`` as bytes in words; None when missing (or 0, unless ``zero_shown``)."""
    if value is None or (not value and not zero_shown):
        return None
    return format_bytes(value)


def _memory_panel(mem: Mapping[str, Any]) -> str:
    rows = [
        ("total", _bytes_if(mem.get("total_bytes"))),
        ("available", _bytes_if(mem.get("available_bytes"))),
        ("swap", _bytes_if(mem.get("swap_total_bytes"), zero_shown=True)),
        ("cgroup limit", _bytes_if(mem.get("cgroup_memory_limit_bytes"))),
    ]
    return _panel("memory", _kv(rows))


def _gpus_panel(gpus: list[Mapping[str, Any]], reason: str | None) -> str:
    if not gpus:
        return _panel("GPUs", f"<p>none: {e(reason or 'not recorded')}</p>")
    rows = [
        (
            f"GPU {g.get('index')}",
            f"{g.get('name')}, {format_bytes(g.get('memory_total_bytes'))}"
            f", driver {g.get('driver_version')}, CC {g.get('compute_capability')}",
        )
        for g in gpus
    ]
    return _panel("GPUs", _kv(rows))


def _tensorflow_panel(tf: Mapping[str, Any]) -> str:
    installed = tf.get("installed", True)
    devices = ", ".join(str(d.get("name")) for d in tf.get("physical_devices") or [])
    rows = [
        ("version", tf.get("version") if installed else None),
        ("not available", tf.get("reason") if not installed else None),
        ("devices", devices),
        ("oneDNN", tf.get("onednn")),
        ("threads", _threads(tf)),
    ]
    return _panel("TensorFlow", _kv(rows))


def _blas_panel(fp: Mapping[str, Any]) -> str:
    rows: list[tuple[str, object]] = [("NumPy", (fp.get("numpy") or {}).get("version"))]
    for b in fp.get("blas") or []:
        arch = f", {b['architecture']}" if b.get("architecture") else ""
        rows.append(
            (
                str(b.get("internal_api")),
                f"{b.get('version')}, {b.get('num_threads')} threads{arch}",
            )
        )
    return _panel("NumPy and BLAS", _kv(rows))


def _threads(tf: Mapping[str, Any]) -> str | None:
    if not tf.get("intra_op_threads"):
        return None
    return f"intra-op {tf.get('intra_op_threads')}, inter-op {tf.get('inter_op_threads')}"


def _findings(findings: list[dict[str, Any]]) -> str:
    if not findings:
        return "<h2>Findings</h2><p>No problems found by the diagnosis rules.</p>"
    order = {"critical": 0, "warning": 1, "info": 2}
    items = []
    for f in sorted(findings, key=lambda f: order.get(str(f.get("severity")), 3)):
        sev = str(f.get("severity") or "info")
        sev_cls = sev if sev in order else "info"
        span = f.get("span")
        when = f" (t = {span[0]:.1f} to {span[1]:.1f} s)" if span and len(span) == 2 else ""
        items.append(
            f'<div class="finding {sev_cls}"><span class="sev">{e(sev)}</span> '
            f"<strong>{e(f.get('title'))}</strong>"
            f"<p><b>evidence</b>: {e(f.get('evidence'))}{e(when)}</p>"
            f"<p><b>cause</b>: {e(f.get('cause'))}</p>"
            f"<p><b>fix</b>: <code>{e(f.get('fix'))}</code></p></div>"
        )
    return f"<h2>Findings ({len(findings)})</h2>" + "".join(items)


def _workloads(workloads: list[dict[str, Any]]) -> str:
    if not workloads:
        return ""
    head = (
        "workload",
        "device",
        "time (median ±spread)",
        "throughput",
        "run CPU",
        "GPU util",
        "peak memory (RSS / TF)",
        "notes",
    )
    rows = []
    for w in workloads:
        notes = fmt.key_notes(w)
        if w.get("error"):
            notes.insert(0, str(w["error"]))
        cls = ' class="err"' if w.get("error") else ""
        cells = [
            (fmt.workload_label(w), ""),
            (w.get("device"), ""),
            (fmt.time_spread(w), "num"),
            (fmt.throughput(w), "num"),
            (fmt.run_cpu(w), "num"),
            (fmt.device_util(w), "num"),
            (fmt.peak_memory(w), "num"),
            ("; ".join(notes), ""),
        ]
        tds = "".join(f'<td class="{c}">{e(v)}</td>' if c else f"<td>{e(v)}</td>" for v, c in cells)
        rows.append(f"<tr{cls}>{tds}</tr>")
    verdicts = []
    seen: set[str] = set()
    for w in workloads:
        d = w.get("details") or {}
        for text in (d.get("verdict"), d.get("peak_estimate")):
            if text and text not in seen:
                seen.add(str(text))
                verdicts.append(
                    f'<p class="verdict"><b>{e(w.get("name"))} {e(w.get("device"))}</b>: '
                    f"{e(text)}</p>"
                )
    th = "".join(f"<th>{e(h)}</th>" for h in head)
    return (
        '<h2>Workloads</h2><p class="sub">Times are per repeat, warm-up excluded; run CPU is '
        "this process (100% = one core).</p>"
        f"<table><thead><tr>{th}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        + "".join(verdicts)
    )


def _chart(key: str, title: str, caption: str, make: Callable[[], Any]) -> str:

    try:
        fig = make()
    except Exception as err:  # one chart that cannot be drawn must not lose the page
        log.warning("tfres report: chart %r failed: %s", title, err)
        return f'<h3>{e(title)}</h3><p class="sub">could not be drawn: {e(err)}</p>'
    if fig is None:
        return ""
    return (
        f"<h3>{e(title)}</h3><figure>{figure_to_svg(fig, title=title, id_prefix=key + '-')}"
        f"<figcaption>{e(caption)}</figcaption></figure>"
    )


def _timelines(record: Record) -> str:

    if not record.samples:
        return "<h2>Timeline</h2><p>No samples in this record.</p>"
    parts = [
        _chart(
            "cpu",
            "CPU",
            "Whole machine and this run (0-100% of all cores); below, each core. "
            "Shaded: phases; dashed: marks.",
            lambda: charts.cpu_chart(record),
        ),
        _chart(
            "memory",
            "Memory",
            "Memory in use on the machine, this run's RSS, and TensorFlow's allocator per device.",
            lambda: charts.memory_chart(record),
        ),
    ]
    gpu = _chart(
        "gpu", "GPU", "Utilization and memory of each GPU (NVML).", lambda: charts.gpu_chart(record)
    )
    if gpu:
        parts.append(gpu)
    else:
        reason = (record.fingerprint or {}).get("gpus_reason") or "no GPU samples in this record"
        parts.append(f'<h3>GPU</h3><p class="sub">No GPU samples: {e(reason)}</p>')
    table = _phase_table(record)
    n = len(record.samples)
    sub = f"{n} samples every {e(record.interval_seconds)} s"
    if record.aggregates:
        sub += f", plus {len(record.aggregates)} older 10 s summaries"
    return f'<h2>Timeline</h2><p class="sub">{sub}</p>' + "".join(parts) + table


def _phase_table(record: Record) -> str:
    rows = fmt.phase_summary(record)
    if not rows:
        return ""
    head = ("phase", "start", "took", "run CPU", "machine CPU", "peak RSS", "GPU util")
    body = "".join(
        f"<tr><td>{e(r['name'])}</td>"
        f'<td class="num">{r["start_seconds"]:.1f} s</td>'
        f'<td class="num">{e(format_seconds(r["duration_seconds"]))}</td>'
        f'<td class="num">{e(format_percent(r["process_cpu_percent_mean"]))}</td>'
        f'<td class="num">{e(format_percent(r["cpu_percent_mean"]))}</td>'
        f'<td class="num">{e(format_bytes(r["peak_rss_bytes"]))}</td>'
        f'<td class="num">{e(format_percent(r["gpu_util_percent_mean"]))}</td></tr>'
        for r in rows
    )
    th = "".join(f"<th>{h}</th>" for h in head)
    return f"<h3>Phases</h3><table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _batch_sweep(record: Record) -> str:

    html = _chart(
        "sweep",
        "Batch sweep",
        "Samples per second (solid) and peak memory (dashed: TensorFlow's allocator, else "
        "the RSS) by batch size.",
        lambda: charts.batch_sweep_chart(record),
    )
    return f"<h2>Batch sweep</h2>{html}" if html else ""


def _steps(record: Record) -> str:
    durations = sorted(
        float(s["duration_seconds"])
        for s in record.steps
        if isinstance(s.get("duration_seconds"), (int, float))
    )
    if not durations:
        return ""
    med = durations[len(durations) // 2]
    p95 = durations[min(len(durations) - 1, int(len(durations) * 0.95))]

    breakdown = breakdown_line(record.extra.get("profile"))
    extra = f"<p>Step breakdown (profiler): {e(breakdown)}.</p>" if breakdown else ""
    return (
        f"<h2>Steps</h2><p>{len(durations)} steps: median {e(format_seconds(med))}, "
        f"95th percentile {e(format_seconds(p95))}.</p>{extra}"
    )


def _notes(record: Record) -> str:
    if not record.notes:
        return ""
    return (
        '<h2>Notes</h2><ul class="notes">'
        + "".join(f"<li>{e(n)}</li>" for n in record.notes)
        + "</ul>"
    )


def render_html(record: Record) -> str:
    """The record as a self-contained HTML page (a string); works offline.

    A record without samples (or without workloads, or GPUs) gets a page without those
    sections, saying so; a chart that fails to draw is replaced by one line naming the error.
    """
    body = "".join(
        [
            _header(record),
            _findings(record.findings),
            _workloads(record.workloads),
            _batch_sweep(record),
            _timelines(record),
            _steps(record),
            _machine(record.fingerprint or {}),
            _notes(record),
        ]
    )
    return html_page(
        f"tfres {record.kind}: {record.label or record.id}", body, source=f"record {record.id}"
    )


def html_page(title: str, body: str, *, source: str) -> str:
    """A self-contained page (the report's style, no network) around ``body``, an HTML
    fragment whose record strings are already escaped; ``title`` and ``source`` (the record
    or job it was written from) are escaped here."""
    return Template(_template("page.html")).substitute(
        title=e(title),
        css=_template("report.css"),
        body=body,
        version=e(__version__),
        record_id=e(source),
    )


def write_html(record: Record, path: str | os.PathLike[str]) -> Path:
    """Write :func:`render_html` of ``record`` to ``path`` atomically; returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, render_html(record).encode("utf-8"))
    return target
