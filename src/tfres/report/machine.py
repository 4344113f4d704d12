"""The machine in the terminal: ``tfres env``'s fingerprint tables and ``tfres doctor``'s
checks (rich, at most 100 columns).

    render_fingerprint(tfres.fingerprint().to_dict(), console)
    render_checks(tfres.doctor(), console)
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tfres.machine.checks import Check, exit_status
from tfres.units import format_bytes, format_cpu_list

__all__ = ["render_fingerprint", "render_checks", "overall_status", "checks_json"]

_VERDICT_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "skip": "dim"}


def _value(key: str, value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key.endswith("_bytes") and isinstance(value, (int, float)):
        return format_bytes(value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_value(k, v)}" for k, v in value.items()) or "-"
    if isinstance(value, list):
        if all(isinstance(v, int) for v in value):
            return format_cpu_list(value) or "-"
        return ", ".join(str(v) for v in value) or "-"
    return str(value)


def _heading(out: Console, title: str, note: str | None = None) -> None:
    out.print(f"[bold]{title}[/bold]" + (f"  [dim]({escape(note)})[/dim]" if note else ""))


def _section_table(section: dict[str, Any], *, skip: tuple[str, ...] = ()) -> Table:
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for key, value in section.items():
        if key == "source" or key in skip:
            continue
        if value is None and key.endswith(("reason", "error", "evidence")):
            continue
        text = escape(_value(key, value))
        table.add_row(escape(key), f"[red]{text}[/red]" if key == "error" else text)
    return table


def render_fingerprint(fp: dict[str, Any], out: Console) -> None:
    """Print a fingerprint dict as one small table per section (at most 100 columns)."""
    for key, title in (("host", "Host"), ("cpu", "CPU"), ("memory", "Memory")):
        section = fp.get(key) or {}
        _heading(out, title, f"read via {section.get('source')}")
        out.print(_section_table(section))
        out.print()
    _render_gpus(fp, out)
    tf = dict(fp.get("tensorflow") or {})
    _heading(out, "TensorFlow", f"read via {tf.get('source')}")
    out.print(_section_table(tf, skip=("physical_devices",)))
    devices = tf.get("physical_devices")
    if devices:
        names = ", ".join(f"{d.get('name')} ({d.get('device_type')})" for d in devices)
        out.print(f"  [bold]physical_devices[/bold]  {escape(names)}")
    out.print()
    _render_blas(fp, out)
    env = fp.get("env") or {}
    _heading(out, "Environment", "behaviour-changing variables; secrets are never captured")
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for name, value in env.items():
        table.add_row(escape(name), escape(str(value)))
    out.print(table if env else "  none set")
    out.print()
    _render_load(fp.get("load") or {}, out)


def _render_gpus(fp: dict[str, Any], out: Console) -> None:
    gpus = fp.get("gpus") or []
    if not gpus:
        reason = fp.get("gpus_reason") or "NVML sees none"
        out.print(f"[bold]GPUs[/bold]: none ({escape(str(reason))})")
        pci = fp.get("gpus_pci")
        if pci:
            out.print(
                f"  [yellow]but the PCI bus has NVIDIA GPU(s): {escape(', '.join(pci))}[/yellow]"
            )
        out.print()
        return
    _heading(out, "GPUs", "read via NVML")
    table = Table()
    for col in (
        "#",
        "name",
        "memory used/total",
        "util",
        "driver / CUDA",
        "CC",
        "MIG",
        "processes",
    ):
        table.add_column(col, overflow="fold")
    for g in gpus:
        procs = g.get("processes")
        table.add_row(
            str(g.get("index")),
            escape(str(g.get("name"))),
            format_bytes(g.get("memory_used_bytes"))
            + " / "
            + format_bytes(g.get("memory_total_bytes")),
            _value("util_percent", g.get("util_percent"))
            + ("%" if g.get("util_percent") is not None else ""),
            escape(f"{g.get('driver_version')} / {g.get('cuda_driver_version')}"),
            escape(str(g.get("compute_capability") or "n/a")),
            _value("mig_mode", g.get("mig_mode")),
            "n/a"
            if procs is None
            else escape(
                ", ".join(
                    f"{p.get('name') or p.get('pid')} {format_bytes(p.get('used_memory_bytes'))}"
                    for p in procs
                )
                or "-"
            ),
        )
    out.print(table)
    for g in gpus:
        if g.get("error"):
            out.print(f"  [red]GPU {g.get('index')}: {escape(str(g['error']))}[/red]")
    out.print()


def _render_blas(fp: dict[str, Any], out: Console) -> None:
    numpy_version = (fp.get("numpy") or {}).get("version")
    pools = fp.get("blas") or []
    _heading(out, f"numpy {numpy_version} and its thread pools", "read via threadpoolctl")
    table = Table()
    for col in ("library", "version", "threads", "architecture", "file"):
        table.add_column(col, overflow="fold")
    for p in pools:
        table.add_row(
            escape(str(p.get("internal_api"))),
            escape(str(p.get("version") or "n/a")),
            str(p.get("num_threads")),
            escape(str(p.get("architecture") or "n/a")),
            escape(str(p.get("filepath") or "")),
        )
    if pools:
        out.print(table)
    else:
        why = fp.get("blas_error") or "no pool loaded"
        out.print(f"  no BLAS or OpenMP pool found ({escape(str(why))})")
    out.print()


def _render_load(load: dict[str, Any], out: Console) -> None:
    if load.get("skipped"):
        return
    if load.get("error"):
        out.print(f"[bold]Background load[/bold]: [red]{escape(str(load['error']))}[/red]")
        return
    _heading(out, "Background load", str(load.get("source", "")))
    table = Table()
    table.add_column("top CPU", overflow="fold")
    table.add_column("CPU", justify="right")
    table.add_column("top memory", overflow="fold")
    table.add_column("RSS", justify="right")
    cpu, mem = load.get("top_cpu") or [], load.get("top_memory") or []
    for i in range(max(len(cpu), len(mem))):
        c = cpu[i] if i < len(cpu) else {}
        m = mem[i] if i < len(mem) else {}
        table.add_row(
            escape(f"{c.get('name')} ({c.get('pid')})") if c else "",
            f"{c['cpu_percent']:.1f}%" if c else "",
            escape(f"{m.get('name')} ({m.get('pid')})") if m else "",
            format_bytes(m.get("rss_bytes")) if m else "",
        )
    out.print(table)


def render_checks(checks: list[Check], out: Console) -> None:
    """Print the doctor's checks as one table (verdict, evidence, fix) and a summary line."""
    status = exit_status(checks)
    table = Table(title="tfres doctor", title_justify="left", show_lines=True, expand=True)
    table.add_column("check", ratio=2, overflow="fold")
    table.add_column("verdict", no_wrap=True)
    table.add_column("evidence", ratio=5, overflow="fold")
    table.add_column("fix", ratio=4, overflow="fold")
    for c in checks:
        style = _VERDICT_STYLE.get(c.status, "")
        table.add_row(
            escape(c.title or c.name),
            f"[{style}]{c.status.upper()}[/{style}]",
            escape(c.evidence),
            escape(c.fix) if c.fix else "[dim]-[/dim]",
        )
    out.print(table)
    counts = {s: sum(1 for c in checks if c.status == s) for s in ("ok", "warn", "fail", "skip")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    out.print(f"{summary}; exit status {status}")


def overall_status(checks: list[Check]) -> str:
    """``"fail"`` when a check failed, else ``"warn"`` when one warned, else ``"ok"``."""
    if exit_status(checks):
        return "fail"
    return "warn" if any(c.status == "warn" for c in checks) else "ok"


def checks_json(checks: list[Check]) -> dict[str, Any]:
    """The doctor's answer as JSON: the overall status and every check."""
    return {"status": overall_status(checks), "checks": [c.to_dict() for c in checks]}
