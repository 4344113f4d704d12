"""How NVML's GPU utilization reads a duty-cycled load, against CUDA events (no tfres).

    python benchmarks/gpu/util_probe.py probe.json

Each phase runs bf16 matrix products for half of every period (20 ms, 100 ms, 200 ms, 1 s),
or only host-to-device copies. Per phase it compares:

- truth: the kernels' GPU time from CUDA events, over the phase's wall time;
- ``latest``: ``nvmlDeviceGetUtilizationRates`` read every 200 ms (what nvidia-smi -lms 200
  and a 0.2 s sampler read: the driver's latest sample only);
- ``samples``: the mean of every sample in the driver's buffer over the phase
  (``nvmlDeviceGetSamples(NVML_GPU_UTILIZATION_SAMPLES)``), and their spacing;
- ``gpm``: Hopper's performance monitor over the phase (graphics and SM utilization).
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time

import pynvml
import torch
from torch_phases import burst  # the same timed products (this folder is on sys.path)

pynvml.nvmlInit()
HANDLE = pynvml.nvmlDeviceGetHandleByIndex(0)


def gpm_sample():
    try:
        sample = pynvml.nvmlGpmSampleAlloc()
        return pynvml.nvmlGpmSampleGet(HANDLE, sample)
    except Exception as err:
        return f"{type(err).__name__}: {err}"


def gpm_metrics(s1, s2):
    if isinstance(s1, str) or isinstance(s2, str):
        return s1 if isinstance(s1, str) else s2
    get = pynvml.c_nvmlGpmMetricsGet_t()
    get.version = pynvml.NVML_GPM_METRICS_GET_VERSION
    get.numMetrics = 2
    get.sample1, get.sample2 = s1, s2
    get.metrics[0].metricId = pynvml.NVML_GPM_METRIC_GRAPHICS_UTIL
    get.metrics[1].metricId = pynvml.NVML_GPM_METRIC_SM_UTIL
    try:
        pynvml.nvmlGpmMetricsGet(get)
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    return {"graphics": get.metrics[0].value, "sm": get.metrics[1].value}


def driver_samples(since_us):
    try:
        kind, samples = pynvml.nvmlDeviceGetSamples(
            HANDLE, pynvml.NVML_GPU_UTILIZATION_SAMPLES, since_us
        )
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    field = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal"}.get(kind, "uiVal")
    return [(s.timeStamp, getattr(s.sampleValue, field)) for s in samples]


class Latest(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.reads, self.stop = [], False

    def run(self):
        while not self.stop:
            self.reads.append((time.time(), pynvml.nvmlDeviceGetUtilizationRates(HANDLE).gpu))
            time.sleep(0.2)


def main(path):
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    burst(a, b, 50)
    per = burst(a, b, 200) / 200
    host = torch.ones(1 << 30, dtype=torch.uint8).pin_memory()
    target = torch.empty_like(host, device="cuda")
    reader = Latest()
    reader.start()
    results = []
    for name, period, seconds in [("duty 20 ms", 0.02, 5), ("duty 100 ms", 0.1, 5),
                                  ("duty 200 ms", 0.2, 5), ("duty 1 s", 1.0, 6),
                                  ("copies only", None, 4), ("idle", None, 3)]:  # fmt: skip
        time.sleep(0.5)
        g1, start, busy = gpm_sample(), time.time(), 0.0
        while time.time() - start < seconds:
            t0 = time.time()
            if period is not None:
                busy += burst(a, b, max(1, round(0.5 * period / per)))
                time.sleep(max(0.0, period - (time.time() - t0)))
            elif name == "copies only":
                target.copy_(host, non_blocking=True)
                torch.cuda.synchronize()
            else:
                time.sleep(0.1)
        end, g2 = time.time(), gpm_sample()
        raw = driver_samples(int(start * 1e6))
        inside = [] if isinstance(raw, str) else [v for t, v in raw if start <= t / 1e6 <= end]
        stamps = [] if isinstance(raw, str) else [t for t, _ in raw if start <= t / 1e6 <= end]
        returned = [] if isinstance(raw, str) else [v for _, v in raw]
        gaps = [(b2 - b1) / 1e3 for b1, b2 in zip(stamps, stamps[1:], strict=False)]
        latest = [v for t, v in reader.reads if start + 0.3 <= t <= end]
        results.append({
            "phase": name, "truth_percent": 100 * busy / (end - start),
            "latest_mean": statistics.fmean(latest) if latest else None,
            "samples_mean": statistics.fmean(inside) if inside else None,
            "samples": len(inside),
            "returned_mean": statistics.fmean(returned) if returned else None,
            "returned": len(returned), "sample_gap_ms": statistics.median(gaps) if gaps else None,
            "raw_head": raw[:5] if not isinstance(raw, str) else raw,
            "gpm": gpm_metrics(g1, g2), "now_us": int(end * 1e6),
        })  # fmt: skip
    reader.stop = True
    with open(path, "w") as fh:
        json.dump(results, fh, indent=1, default=str)
    print(
        "| phase | truth | latest, every 200 ms | driver samples in the phase: mean (n, gap) "
        "| all returned: mean (n) | GPM |\n|---|---|---|---|---|---|"
    )
    for r in results:
        print(
            f"| {r['phase']} | {r['truth_percent']:.1f}% | {r['latest_mean']} | "
            f"{r['samples_mean']} ({r['samples']}, {r['sample_gap_ms']} ms) | "
            f"{r['returned_mean']} ({r['returned']}) | {r['gpm']} |"
        )
    print("raw head of the last phase:", results[-1]["raw_head"], "now", results[-1]["now_us"])


if __name__ == "__main__":
    main(sys.argv[1])
