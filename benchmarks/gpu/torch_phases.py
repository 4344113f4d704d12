"""A PyTorch program in five phases that measures its own GPU use (it never imports tfres).

    python benchmarks/gpu/torch_phases.py truth.json

The truth it writes, per phase, comes from the program itself and not from NVML:

- ``start``/``end``: wall-clock time (``time.time()``) around the phase;
- ``busy_seconds``: GPU time of the phase's kernels, from CUDA events around each burst
  (``busy_seconds / (end - start)`` is what ``utilization.gpu`` should read);
- ``reserved_bytes``: what PyTorch's caching allocator holds at the end of the phase;
- ``copied_bytes``: bytes copied host to device (the PCIe phase).

Phases: ``idle`` (a CUDA context, no work), ``busy`` (back-to-back bf16 matrix products on a
16 GiB working set), ``half`` (the same products for about half of each 200 ms period),
``copy`` (pinned host-to-device copies of 1 GiB) and ``freed`` (everything released).
"""

from __future__ import annotations

import json
import sys
import time

import torch

SECONDS = {"idle": 4.0, "busy": 6.0, "half": 6.0, "copy": 4.0, "freed": 4.0}
PERIOD_SECONDS = 0.2


def burst(a: torch.Tensor, b: torch.Tensor, n: int) -> float:
    """Run ``n`` products back to back; the GPU seconds they took, from CUDA events."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n):
        torch.mm(a, b)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1000.0


def main(path: str) -> None:
    device = torch.device("cuda:0")
    torch.ones(1, device=device)  # the CUDA context
    truth: dict = {"device": torch.cuda.get_device_name(0), "phases": {}}

    def record(name: str, start: float, **values: float) -> None:
        truth["phases"][name] = {
            "start": start,
            "end": time.time(),
            "reserved_bytes": torch.cuda.memory_reserved(device),
            **values,
        }

    start = time.time()
    time.sleep(SECONDS["idle"])
    record("idle", start, busy_seconds=0.0)

    start = time.time()
    block = torch.empty(16 << 30, dtype=torch.uint8, device=device).fill_(1)
    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    busy, products = 0.0, 0
    while time.time() - start < SECONDS["busy"]:
        busy += burst(a, b, 20)
        products += 20
    record("busy", start, busy_seconds=busy)
    per_product = busy / products

    start = time.time()
    n = max(1, round(0.5 * PERIOD_SECONDS / per_product))
    busy = 0.0
    while time.time() - start < SECONDS["half"]:
        t0 = time.time()
        busy += burst(a, b, n)
        time.sleep(max(0.0, PERIOD_SECONDS - (time.time() - t0)))
    record("half", start, busy_seconds=busy)

    start = time.time()
    host = torch.ones(1 << 30, dtype=torch.uint8).pin_memory()
    target = torch.empty_like(host, device=device)
    copied, busy = 0, 0.0
    while time.time() - start < SECONDS["copy"]:
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        target.copy_(host, non_blocking=True)
        e1.record()
        e1.synchronize()
        busy += e0.elapsed_time(e1) / 1000.0
        copied += host.numel()
    record("copy", start, copied_bytes=copied, copy_seconds=busy)

    start = time.time()
    del block, a, b, host, target
    torch.cuda.empty_cache()
    time.sleep(SECONDS["freed"])
    record("freed", start, busy_seconds=0.0)

    with open(path, "w") as fh:
        json.dump(truth, fh, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
