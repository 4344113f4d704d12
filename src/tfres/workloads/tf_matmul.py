"""``tf_matmul``: matrix products through TensorFlow on each selected device.

For each device (``CPU:0``, ``GPU:0``, ...) and size n, two random n x n NumPy matrices are
first copied to the device (timed apart: the host-to-device transfer), then multiplied with
``tf.matmul`` on it (timed: the compute). Each is warmed up once, then timed ``repeats``
times; every timing waits for the device to finish by reading one element back.
On the CPU the "transfer" is TensorFlow taking over the NumPy buffer, often without a copy.
"""

from __future__ import annotations

import time
from typing import Any

from tfres.backends.tf import load_tensorflow
from tfres.backends.tf_placement import on_device
from tfres.backends.tf_runtime import memory_info, reset_memory_peak
from tfres.workloads._context import (
    Workload,
    WorkloadContext,
    failure_text,
    make_result,
    median,
    tf_failures,
)

__all__ = ["WORKLOAD", "run"]

NAME = "tf_matmul"


def _sync(tensor: Any) -> None:
    """Wait until ``tensor`` is computed (GPU kernels run asynchronously)."""
    tensor[0, 0].numpy()


def run(ctx: WorkloadContext) -> list[dict[str, Any]]:
    tf = load_tensorflow()
    p = WORKLOAD.params(quick=ctx.quick, overrides=ctx.params)
    sizes = [int(n) for n in p["sizes"]]
    repeats = int(p["repeats"])
    dtype = str(p["dtype"])
    rng = ctx.rng(1)
    results = []
    total = len(sizes) * len(ctx.devices)
    done = 0
    for device in ctx.devices:
        with ctx.phase(f"{NAME} {device}"):
            for n in sizes:
                ctx.report(done / total, f"{device} n={n}")
                done += 1
                a = rng.standard_normal((n, n)).astype(dtype)
                b = rng.standard_normal((n, n)).astype(dtype)
                results.append(_one_size(ctx, tf, device, a, b, repeats=repeats, dtype=dtype))
    ctx.report(1.0, "done")
    return results


def _time_matmul(
    tf: Any,
    device: str,
    a: Any,
    b: Any,
    repeats: int,
    transfer: list[float],
    compute: list[float],
) -> None:
    """A warm-up, then ``repeats`` timed calls: the copies onto ``device`` and the product
    apart, appended to ``transfer`` and ``compute`` as they come (kept when a later one fails).
    """
    with on_device(device):
        for i in range(repeats + 1):  # i == 0 is the warm-up
            t = time.perf_counter()
            xa = tf.constant(a)
            xb = tf.constant(b)
            _sync(xa)
            _sync(xb)
            t_transfer = time.perf_counter() - t
            t = time.perf_counter()
            c = tf.matmul(xa, xb)
            _sync(c)
            t_compute = time.perf_counter() - t
            if i > 0:
                transfer.append(t_transfer)
                compute.append(t_compute)
            del xa, xb, c


def _one_size(
    ctx: WorkloadContext, tf: Any, device: str, a: Any, b: Any, *, repeats: int, dtype: str
) -> dict[str, Any]:
    """The result row of ``a @ b`` on ``device`` (the error when it failed)."""
    n = int(a.shape[0])
    with ctx.span() as span:
        reset_memory_peak(device)
        transfer: list[float] = []
        compute: list[float] = []
        error = None
        try:
            _time_matmul(tf, device, a, b, repeats, transfer, compute)
        except tf_failures(tf) as err:
            error = failure_text(tf, err, f" at n={n}")
        mem = memory_info(device)
    flops = 2.0 * n**3
    seconds = median(compute)
    moved = a.nbytes + b.nbytes
    t_med = median(transfer)
    return make_result(
        ctx,
        name=NAME,
        device=device,
        params={"n": n, "dtype": dtype},
        times=compute,
        span=span,
        throughput=flops / seconds / 1e9 if seconds else None,
        throughput_unit="GFLOP/s",
        peak_tf_memory_bytes=mem["peak_bytes"] if mem else None,
        details={
            "variant": f"n={n}",
            "flops": flops,
            "transfer_bytes": moved,
            "transfer_seconds_median": t_med,
            "transfer_seconds_min": min(transfer) if transfer else None,
            "transfer_seconds_max": max(transfer) if transfer else None,
            "transfer_gbytes_per_second": moved / t_med / 1e9 if t_med else None,
        },
        error=error,
    )


WORKLOAD = Workload(
    name=NAME,
    description="TensorFlow matrix products per device, host-to-device transfer timed apart",
    run=run,
    quick_params={"sizes": [1000, 2000, 3000], "repeats": 3, "dtype": "float32"},
    full_params={"sizes": [1000, 2000, 3000], "repeats": 7, "dtype": "float32"},
)
