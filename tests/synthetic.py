"""Synthetic records built from real Sample objects, for the diagnosis and compare tests.

Only the numbers are made up: the records, samples and fingerprints are the real classes
and dict shapes (contract 1 of the fingerprint), so the rules read them as they read a run.
"""

from __future__ import annotations

import copy
from typing import Any

from tfres.record import Record
from tfres.timeline import GpuSample, Sample

GiB = 2**30


def fingerprint(
    *,
    cores: int = 2,
    affinity: list[int] | None = None,
    quota: float | None = None,
    ram_bytes: int = 24 * GiB,
    cgroup_limit: int | None = None,
    env: dict[str, str] | None = None,
    blas_threads: int | None = None,
    tf_installed: bool = True,
    tf_version: str = "2.21.0",
    tf_gpus: int = 0,
    gpus: list[dict[str, Any]] | None = None,
    top_cpu: list[dict[str, Any]] | None = None,
    cpu_model: str = "Test CPU @ 3.0GHz",
    frequency_mhz: float = 3000.0,
) -> dict[str, Any]:
    """A fingerprint dict in the contract's shape."""
    aff = list(range(cores)) if affinity is None else affinity
    usable = float(min([len(aff)] + ([quota] if quota else [])))
    env = dict(env or {})
    if blas_threads is None:
        var = next(
            (v for v in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS") if v in env),
            None,
        )
        blas_threads = int(env[var]) if var else len(aff)
    return {
        "host": {"hostname": "testhost", "os": "Linux", "kernel": "6.1", "python": "3.11.2"},
        "cpu": {
            "model": cpu_model,
            "physical_cores": cores,
            "logical_cores": cores,
            "frequency_mhz": frequency_mhz,
            "isa_flags": {"avx2": True, "avx512f": False, "fma": True},
            "affinity": aff,
            "cgroup_version": 2,
            "cgroup_cpu_quota_cores": quota,
            "usable_cores": usable,
        },
        "memory": {
            "total_bytes": ram_bytes,
            "available_bytes": ram_bytes // 2,
            "swap_total_bytes": 0,
            "swap_used_bytes": 0,
            "cgroup_memory_limit_bytes": cgroup_limit,
        },
        "gpus": gpus or [],
        "gpus_reason": None if gpus else "no NVIDIA driver",
        "tensorflow": {
            "installed": tf_installed,
            "version": tf_version if tf_installed else None,
            "build_info": {"is_cuda_build": False},
            "physical_devices": [{"name": "/physical_device:CPU:0", "device_type": "CPU"}]
            + [{"name": f"/physical_device:GPU:{i}", "device_type": "GPU"} for i in range(tf_gpus)],
            "onednn": "on",
            "intra_op_threads": 0,
            "inter_op_threads": 0,
            "reason": None,
        },
        "numpy": {"version": "2.1.0"},
        "blas": [
            {
                "internal_api": "openblas",
                "version": "0.3.27",
                "num_threads": blas_threads,
                "architecture": "Haswell",
                "prefix": "libscipy_openblas",
                "filepath": "/x/libopenblas.so",
            }
        ],
        "env": env,
        "load": {"top_cpu": top_cpu or [], "top_memory": []},
    }


def samples(
    n: int = 50,
    *,
    interval: float = 0.1,
    cores: int = 2,
    process_cpu: float | list[float] = 100.0,
    other_cores: float = 0.0,
    rss: int | list[int] = 500 * 2**20,
    available: int = 12 * GiB,
    swap: int | list[int] = 0,
    gpus: list[list[GpuSample]] | None = None,
    tf_memory: dict[str, dict[str, int]] | None = None,
) -> list[Sample]:
    """``n`` samples ``interval`` apart; lists give per-sample values."""
    out = []
    for i in range(n):
        proc = process_cpu[i] if isinstance(process_cpu, list) else process_cpu
        system = min(100.0, (proc / 100.0 + other_cores) / cores * 100.0)
        out.append(
            Sample(
                t_seconds=round(i * interval, 6),
                cpu_percent=system,
                cpu_per_core_percent=tuple([system] * cores),
                memory_used_bytes=GiB,
                memory_available_bytes=available,
                swap_used_bytes=swap[i] if isinstance(swap, list) else swap,
                process_cpu_percent=proc,
                process_count=1,
                process_threads=10,
                process_rss_bytes=rss[i] if isinstance(rss, list) else rss,
                gpus=tuple(gpus[i]) if gpus else (),
                tf_memory=dict(tf_memory or {}),
            )
        )
    return out


def record(
    *, fp: dict[str, Any] | None = None, samples_: list[Sample] | None = None, **kwargs: Any
) -> Record:
    r = Record(kind=kwargs.pop("kind", "run"), **kwargs)
    r.fingerprint = copy.deepcopy(fp if fp is not None else fingerprint())
    r.samples = list(samples_ if samples_ is not None else samples())
    r.interval_seconds = 0.1
    r.status = kwargs.get("status", "ok")
    if r.samples:
        r.elapsed_seconds = r.samples[-1].t_seconds
    return r


def steps(
    n: int = 40, *, duration: float = 0.1, wait: float | None = None, t0: float = 0.5
) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        step: dict[str, Any] = {
            "t_seconds": round(t0 + i * duration, 6),
            "duration_seconds": duration,
            "epoch": 0,
            "step": i,
        }
        if wait is not None:
            step["input_wait_seconds"] = wait
        out.append(step)
    return out


def workload(
    name: str,
    seconds: float,
    *,
    start: float,
    end: float,
    device: str = "host",
    params: dict[str, Any] | None = None,
    variant: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A workload result with the contract's keys."""
    w = {
        "name": name,
        "device": device,
        "params": params or {},
        "repeats": 3,
        "seconds_median": seconds,
        "seconds_min": seconds,
        "seconds_max": seconds,
        "throughput": 1.0 / seconds,
        "throughput_unit": "runs/s",
        "cpu_percent_mean": None,
        "process_cpu_percent_mean": None,
        "gpu_util_percent_mean": None,
        "peak_rss_bytes": None,
        "peak_tf_memory_bytes": None,
        "start_seconds": start,
        "end_seconds": end,
        "details": {"variant": variant} if variant else {},
        "error": None,
    }
    w.update(extra)
    return w
