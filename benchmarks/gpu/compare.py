"""Compare what ``tfres run`` read on a GPU with nvidia-smi beside it and the program's own truth.

    python benchmarks/gpu/compare.py gpu_check.tgz      # the archive device_check.sh writes

Three sources, each measured apart:

- **tfres**: the record of ``tfres run --interval 0.2`` (NVML through ``nvidia-ml-py``);
- **nvidia-smi**: ``nvidia-smi --query-gpu=... -lms 200`` running beside it (the driver's
  own tool, a separate process);
- **truth**: what ``torch_phases.py`` measured itself, never through NVML: CUDA events
  around its kernels, PyTorch's allocator, the bytes it copied.

Phases are trimmed by 0.6 s at each end, since each reader averages over its own window.
The record's clock starts at ``started_at`` (whole seconds), so its offset is found from the
16 GiB allocation: the first sample above 8 GiB is the start of the ``busy`` phase.
"""

from __future__ import annotations

import argparse
import calendar
import json
import statistics
import tarfile
import time
from pathlib import Path
from typing import Any

TRIM_SECONDS = 0.6
EDGE_BYTES = 8 << 30
MIB = 1 << 20


def _smi(text: str) -> list[dict[str, float]]:
    rows = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 6 or not parts[0][:4].isdigit():
            continue
        stamp, frac = parts[0].split(".")
        t = calendar.timegm(time.strptime(stamp, "%Y/%m/%d %H:%M:%S")) + float("0." + frac)
        util, used, power, temp, clock = (float(p) for p in parts[1:])
        rows.append({"t": t, "util": util, "used": used * MIB, "power": power, "clock": clock})
    return rows


def _apps(text: str) -> list[tuple[float, int, int]]:
    """(time, pid, used bytes) from the loop of ``nvidia-smi --query-compute-apps``."""
    rows, now = [], 0.0
    for line in text.splitlines():
        line = line.strip()
        if "," in line:
            pid, used = (int(x) for x in line.split(","))
            rows.append((now, pid, used * MIB))
        elif line.replace(".", "").isdigit():
            now = float(line)
    return rows


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _engine(gpus: list[dict[str, Any]]) -> float | None:
    """The mean compute-engine activity (GPM), where the record has it."""
    return _mean(
        [g["engine_active_percent"] for g in gpus if g.get("engine_active_percent") is not None]
    )


def _within(rows: list[Any], start: float, end: float, key: Any = lambda r: r["t"]) -> list[Any]:
    return [r for r in rows if start + TRIM_SECONDS <= key(r) <= end - TRIM_SECONDS]


def _fmt(value: float | None, unit: str = "", scale: float = 1.0, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value / scale:.{digits}f}{unit}"


def compare(files: dict[str, str]) -> str:
    record = json.loads(files["run.json"])
    truth = json.loads(files["truth.json"])["phases"]
    smi = _smi(files["smi.csv"])
    apps = _apps(files.get("apps.txt", ""))
    samples = [(s["t_seconds"], s["gpus"][0]) for s in record["samples"] if s.get("gpus")]
    edge = next(t for t, g in samples if (g.get("memory_used_bytes") or 0) > EDGE_BYTES)
    offset = truth["busy"]["start"] - edge
    smi_edge = next(r["t"] for r in smi if r["used"] > EDGE_BYTES)
    tf = [{"t": offset + t, **g} for t, g in samples]
    lines = [
        f"device: {json.loads(files['truth.json'])['device']}; record samples every "
        f"{record['interval_seconds']} s; the 8 GiB edge: tfres {edge:.2f} s after its start, "
        f"nvidia-smi {smi_edge - truth['busy']['start']:+.2f} s from the program's own clock",
        "",
        "| phase | truth: kernels busy | tfres util | nvidia-smi util | tfres engine active "
        "(GPM) | tfres power | nvidia-smi power | tfres SM clock | throttle reasons (tfres) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, p in truth.items():
        start, end = p["start"], p["end"]
        busy = p.get("busy_seconds")
        ours, theirs = _within(tf, start, end), _within(smi, start, end)
        reasons = sorted({r for g in ours for r in g.get("throttle_reasons") or []})
        lines.append(
            f"| {name} | {_fmt(None if busy is None else 100 * busy / (end - start), '%')} | "
            f"{_fmt(_mean([g['util_percent'] for g in ours]), '%')} | "
            f"{_fmt(_mean([r['util'] for r in theirs]), '%')} | "
            f"{_fmt(_engine(ours), '%')} | "
            f"{_fmt(_mean([g['power_watts'] for g in ours]), ' W', digits=0)} | "
            f"{_fmt(_mean([r['power'] for r in theirs]), ' W', digits=0)} | "
            f"{_fmt(_mean([g['sm_clock_mhz'] for g in ours]), ' MHz', digits=0)} | "
            f"{', '.join(reasons) or 'none'} |"
        )
    lines += [
        "",
        "| phase | truth: PyTorch reserved | tfres: memory used | nvidia-smi: memory used | "
        "tfres: the run's own | nvidia-smi: the program's (compute-apps) |",
        "|---|---|---|---|---|---|",
    ]
    for name, p in truth.items():
        start, end = p["start"], p["end"]
        ours, theirs = _within(tf, start, end), _within(smi, start, end)
        own = _within(apps, start, end, key=lambda r: r[0])
        gib = float(1 << 30)
        lines.append(
            f"| {name} | {_fmt(p['reserved_bytes'], ' GiB', gib, 2)} | "
            f"{_fmt(_mean([g['memory_used_bytes'] for g in ours]), ' GiB', gib, 2)} | "
            f"{_fmt(_mean([r['used'] for r in theirs]), ' GiB', gib, 2)} | "
            f"{_fmt(_mean([g['process_memory_used_bytes'] for g in ours]), ' GiB', gib, 2)} | "
            f"{_fmt(_mean([used for _, _, used in own]), ' GiB', gib, 2)} |"
        )
    copy = truth["copy"]
    ours = _within(tf, copy["start"], copy["end"])
    rx = _mean([g["pcie_rx_bytes_per_second"] for g in ours])
    lines += [
        "",
        f"PCIe host to device in the copy phase: the program copied "
        f"{copy['copied_bytes'] / copy['copy_seconds'] / 1e9:.1f} GB/s while copying "
        f"({copy['copied_bytes'] / (copy['end'] - copy['start']) / 1e9:.1f} GB/s over the "
        f"phase); tfres read {_fmt(rx, ' GB/s', 1e9)} (NVML's PCIe counter, a 20 ms sample)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive", type=Path, help="gpu_check.tgz from device_check.sh")
    args = parser.parse_args(argv)
    wanted = ("run.json", "truth.json", "smi.csv", "apps.txt")
    try:
        with tarfile.open(args.archive) as tar:
            files = {
                Path(m.name).name: tar.extractfile(m).read().decode()  # type: ignore[union-attr]
                for m in tar.getmembers()
                if Path(m.name).name in wanted
            }
    except (OSError, tarfile.TarError) as err:
        parser.error(
            f"{args.archive}: not a readable gpu_check archive ({' '.join(str(err).split())})"
        )
    missing = [name for name in ("run.json", "truth.json", "smi.csv") if name not in files]
    if missing:
        parser.error(
            f"{args.archive} has no {', '.join(missing)}: run device_check.sh with the run part"
        )
    print(compare(files))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
