"""The flat, unit-named columns of a sample: what CSV, JSON lines, TensorBoard, the
long-run aggregates and Prometheus all read.

    flatten(sample) -> {"t_seconds": 0.1, "cpu_percent": 37.5, "cpu0_percent": 40.0, ...,
                        "process_rss_bytes": 1048576, "gpu0_util_percent": 93.0, ...,
                        "tf_cpu0_current_bytes": 4194304}

Per-core CPU is ``cpuN_percent``, a GPU's values are ``gpuN_<field>`` (N is the NVML index)
and TensorFlow's allocator is ``tf_<device>_current_bytes`` / ``_peak_bytes`` with the device
written ``cpu0``, ``gpu1``. A value that could not be read is ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from tfres.timeline import Sample

__all__ = ["HOST_COLUMNS", "PROCESS_COLUMNS", "GPU_FIELDS", "flatten", "column_names", "tf_key"]

HOST_COLUMNS = (
    "cpu_percent",
    "memory_used_bytes",
    "memory_available_bytes",
    "swap_used_bytes",
    "disk_read_bytes_per_second",
    "disk_write_bytes_per_second",
    "net_sent_bytes_per_second",
    "net_recv_bytes_per_second",
)
PROCESS_COLUMNS = (
    "process_cpu_percent",
    "process_cpu_share_percent",
    "process_count",
    "process_threads",
    "process_rss_bytes",
    "process_uss_bytes",
    "process_pss_bytes",
)
GPU_FIELDS = (
    "util_percent",
    "memory_util_percent",
    "memory_used_bytes",
    "memory_total_bytes",
    "power_watts",
    "temperature_celsius",
    "sm_clock_mhz",
    "pcie_rx_bytes_per_second",
    "pcie_tx_bytes_per_second",
    "engine_active_percent",
    "sm_active_percent",
    "process_memory_used_bytes",
)


def tf_key(device: str) -> str:
    """``"CPU:0"`` -> ``"tf_cpu0"``: the column prefix of one TensorFlow device."""
    return "tf_" + "".join(ch for ch in device.lower() if ch.isalnum())


def flatten(sample: Sample, *, per_core: bool = True, text: bool = True) -> dict[str, Any]:
    """One sample as a flat dict of unit-named columns (see the module docstring).

    ``per_core=False`` leaves out ``cpuN_percent``; ``text=False`` leaves out the one text
    column, ``gpuN_throttle_reasons`` (reasons joined by ``|``, empty when none).
    """
    row: dict[str, Any] = {"t_seconds": sample.t_seconds, "cpu_percent": sample.cpu_percent}
    if per_core:
        for i, value in enumerate(sample.cpu_per_core_percent):
            row[f"cpu{i}_percent"] = value
    for name in HOST_COLUMNS[1:]:
        row[name] = getattr(sample, name)
    for name in PROCESS_COLUMNS:
        row[name] = getattr(sample, name)
    for gpu in sample.gpus:
        prefix = f"gpu{gpu.index}_"
        for name in GPU_FIELDS:
            row[prefix + name] = getattr(gpu, name)
        if text:
            row[prefix + "throttle_reasons"] = "|".join(gpu.throttle_reasons)
    for device, memory in sample.tf_memory.items():
        key = tf_key(device)
        row[key + "_current_bytes"] = memory.get("current_bytes")
        row[key + "_peak_bytes"] = memory.get("peak_bytes")
    return row


_ORDER = {name: i for i, name in enumerate(("t_seconds", "cpu_percent"))}
_LATER = {name: i for i, name in enumerate(HOST_COLUMNS[1:] + PROCESS_COLUMNS)}
_GPU_ORDER = {name: i for i, name in enumerate((*GPU_FIELDS, "throttle_reasons"))}
_CPU_CORE = re.compile(r"^cpu(\d+)_percent$")
_GPU = re.compile(r"^gpu(\d+)_(.+)$")


def _rank(name: str) -> tuple[int, int, int, str]:
    if name in _ORDER:
        return (0, _ORDER[name], 0, "")
    core = _CPU_CORE.match(name)
    if core:
        return (1, int(core.group(1)), 0, "")
    if name in _LATER:
        return (2, _LATER[name], 0, "")
    gpu = _GPU.match(name)
    if gpu:
        return (3, int(gpu.group(1)), _GPU_ORDER.get(gpu.group(2), 99), gpu.group(2))
    if name.startswith("tf_"):
        return (4, 0, 0, name)
    return (5, 0, 0, name)


def column_names(rows: Iterable[dict[str, Any]]) -> list[str]:
    """Every column of ``rows`` in a fixed order: time, CPU and its cores, memory, I/O, the
    process tree, each GPU, TensorFlow, then anything else (GPUs may come and go)."""
    names: set[str] = set()
    for row in rows:
        names.update(row)
    return sorted(names, key=_rank)
