"""Formatting of workload results, shared by the terminal and HTML reports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tfres.units import format_bytes

__all__ = [
    "compact_bytes",
    "device_util",
    "key_notes",
    "machine_summary",
    "phase_summary",
    "peak_memory",
    "peak_memory_compact",
    "run_cpu",
    "throughput",
    "time_spread",
    "workload_label",
]


def _seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms" if s < 0.1 else f"{s * 1e3:.0f} ms"
    return f"{s:.2f} s"


def workload_label(w: Mapping[str, Any]) -> str:
    """``"cpu_matmul n=2000"``: the name and the variant that tells rows apart."""
    variant = (w.get("details") or {}).get("variant")
    return f"{w.get('name')} {variant}" if variant else str(w.get("name"))


def time_spread(w: Mapping[str, Any]) -> str:
    """Median seconds per repeat and the spread: ``"120 ms ±12%"``; ``"-"`` when not run."""
    med, lo, hi = w.get("seconds_median"), w.get("seconds_min"), w.get("seconds_max")
    if med is None:
        return "-"
    text = _seconds(float(med))
    if lo is not None and hi is not None and med > 0 and (w.get("repeats") or 0) > 1:
        spread = max(float(hi) - float(med), float(med) - float(lo)) / float(med) * 100
        text += f" ±{spread:.0f}%"
    return text


def throughput(w: Mapping[str, Any]) -> str:
    """``"151 GFLOP/s"``, or what stopped it (``"out of memory"``, ``"skipped"``, ``"failed"``)."""
    value = w.get("throughput")
    if value is None:
        err = str(w.get("error") or "")
        if "out of memory" in err:
            return "out of memory"
        if err.startswith("skipped"):
            return "skipped"
        return "failed" if err else "-"
    unit = w.get("throughput_unit") or ""
    if value >= 100:
        number = f"{value:,.0f}"
    elif value >= 10:
        number = f"{value:.1f}"
    else:
        number = f"{value:.2f}"
    return f"{number} {unit}".strip()


def run_cpu(w: Mapping[str, Any]) -> str:
    """The process's CPU over the workload, 100% = one core."""
    value = w.get("process_cpu_percent_mean")
    return "-" if value is None else f"{value:.0f}%"


def device_util(w: Mapping[str, Any]) -> str:
    """GPU utilization for GPU rows; ``"-"`` elsewhere."""
    value = w.get("gpu_util_percent_mean")
    return "-" if value is None else f"{value:.0f}%"


def compact_bytes(n: int | float | None) -> str:
    """Bytes in at most 5 characters, binary units: ``"898M"``, ``"1.2G"``, ``"64K"``."""
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "K", "M", "G", "T"):
        if value < 1000 or unit == "T":
            return f"{value:.1f}{unit}" if value < 10 and unit != "B" else f"{value:.0f}{unit}"
        value /= 1024
    raise AssertionError("unreachable")


def peak_memory_compact(w: Mapping[str, Any]) -> str:
    """Peak RSS and the TF allocator's peak for narrow tables: ``"898M / 133M"``."""
    rss, tfm = w.get("peak_rss_bytes"), w.get("peak_tf_memory_bytes")
    if rss is None and not tfm:
        return "-"
    return f"{compact_bytes(rss)} / {compact_bytes(tfm) if tfm else '-'}"


def peak_memory(w: Mapping[str, Any]) -> str:
    """Peak RSS (and the TF allocator's peak when known): ``"812 MiB / TF 21 MiB"``."""
    rss, tfm = w.get("peak_rss_bytes"), w.get("peak_tf_memory_bytes")
    parts = []
    if rss is not None:
        parts.append(format_bytes(rss))
    if tfm:
        parts.append(f"TF {format_bytes(tfm)}")
    return " / ".join(parts) or "-"


def key_notes(w: Mapping[str, Any]) -> list[str]:
    """The one-line facts a row's details add (peak fraction, transfer, verdicts)."""
    d = w.get("details") or {}
    notes: list[str] = []
    if d.get("fraction_of_peak") is not None:
        notes.append(
            f"{d['fraction_of_peak']:.0%} of the estimated peak {d.get('peak_gflops'):.0f} GFLOP/s"
        )
    if d.get("transfer_seconds_median") is not None:
        rate = d.get("transfer_gbytes_per_second")
        notes.append(
            f"host-to-device {_seconds(float(d['transfer_seconds_median']))}"
            + (f" ({rate:.1f} GB/s)" if rate else "")
        )
    if d.get("step_seconds_median") is not None:
        notes.append(f"{_seconds(float(d['step_seconds_median']))} per step")
    if d.get("input_wait_fraction") is not None:
        notes.append(f"{d['input_wait_fraction']:.0%} of the time waiting for input")
    if d.get("speedup_vs_naive") is not None:
        notes.append(f"{d['speedup_vs_naive']:.2f}x naive")
    return notes


def machine_summary(fp: Mapping[str, Any]) -> str:
    """One line about the machine: ``"Xeon, 2 cores @ 2.6 GHz (AVX-512); 23.5 GiB RAM; no GPU"``."""
    cpu = fp.get("cpu") or {}
    mem = fp.get("memory") or {}
    tf = fp.get("tensorflow") or {}
    parts = []
    if cpu:
        text = str(cpu.get("model") or "CPU")
        if cpu.get("logical_cores"):
            text += f", {cpu.get('logical_cores')} cores"
            usable = cpu.get("usable_cores")
            if usable and float(usable) < float(cpu["logical_cores"]):
                text += f" ({float(usable):g} usable)"
        if cpu.get("frequency_mhz"):
            text += f" @ {float(cpu['frequency_mhz']) / 1000:.1f} GHz"
        flags = cpu.get("isa_flags") or {}
        isa = "AVX-512" if flags.get("avx512f") else "AVX2" if flags.get("avx2") else None
        if isa:
            text += f" ({isa})"
        parts.append(text)
    if mem.get("total_bytes"):
        parts.append(f"{format_bytes(mem['total_bytes'])} RAM")
    gpus = fp.get("gpus")
    if gpus:
        names = sorted({str(g.get("name")) for g in gpus})
        parts.append(f"{len(gpus)} GPU: {', '.join(names)}")
    elif gpus is not None:
        parts.append("no GPU")
    if tf.get("version"):
        parts.append(f"TensorFlow {tf['version']}")
    elif tf and not tf.get("installed", True):
        parts.append("no TensorFlow")
    return "; ".join(parts)


def phase_summary(record: Any) -> list[dict[str, Any]]:
    """Per phase: duration, mean run and machine CPU, peak RSS, mean GPU utilization.

    Computed from the samples taken during the phase (a sample covers the interval before
    it); a figure no sample has is None.
    """
    interval = float(record.interval_seconds or 0.1)
    rows = []
    for phase in record.phases:
        end = phase.end_seconds if phase.end_seconds is not None else record.elapsed_seconds
        if end is None:
            continue
        inside = [s for s in record.samples if phase.start_seconds < s.t_seconds <= end + interval]

        def mean(values: list[float | None]) -> float | None:
            vals = [float(v) for v in values if v is not None]
            return sum(vals) / len(vals) if vals else None

        rss = [s.process_rss_bytes for s in inside if s.process_rss_bytes is not None]
        rows.append(
            {
                "name": phase.name,
                "start_seconds": phase.start_seconds,
                "duration_seconds": end - phase.start_seconds,
                "process_cpu_percent_mean": mean([s.process_cpu_percent for s in inside]),
                "cpu_percent_mean": mean([s.cpu_percent for s in inside]),
                "peak_rss_bytes": max(rss) if rss else None,
                "gpu_util_percent_mean": mean([g.util_percent for s in inside for g in s.gpus]),
            }
        )
    return rows
