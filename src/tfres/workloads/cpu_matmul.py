"""``cpu_matmul``: NumPy matrix products, against the CPU's theoretical peak.

For each size n, two random n x n matrices are multiplied with ``a @ b`` (the BLAS library
NumPy links, with its own thread pool): one warm-up product, then ``repeats`` timed ones.
The figures: seconds, GFLOP/s (2 n^3 floating-point operations per product) and the
fraction of the CPU's theoretical peak (see :mod:`tfres.workloads.peak` for the estimate).
Needs no TensorFlow.
"""

from __future__ import annotations

import time
from typing import Any

from tfres.backends.blas import blas_pools
from tfres.workloads._context import Workload, WorkloadContext, make_result, median
from tfres.workloads.peak import estimate_peak

__all__ = ["WORKLOAD", "run", "blas_libraries"]

NAME = "cpu_matmul"


def blas_libraries(ctx: WorkloadContext | None = None) -> list[dict[str, Any]]:
    """The BLAS libraries NumPy uses and their thread counts (threadpoolctl's view)."""
    fp = dict((ctx.fingerprint if ctx else None) or {})
    libs = fp.get("blas")
    if not libs:
        try:
            libs = [p for p in blas_pools() if p.get("user_api") == "blas"]
        except Exception:  # threadpoolctl cannot always inspect exotic builds
            libs = []
    keys = ("internal_api", "version", "num_threads", "architecture", "threading_layer")
    return [{k: lib.get(k) for k in keys if k in lib} for lib in libs]


def run(ctx: WorkloadContext) -> list[dict[str, Any]]:
    import numpy as np

    p = WORKLOAD.params(quick=ctx.quick, overrides=ctx.params)
    sizes = [int(n) for n in p["sizes"]]
    repeats = int(p["repeats"])
    dtype = str(p["dtype"])
    peak = estimate_peak((ctx.fingerprint or {}).get("cpu"), dtype=dtype)
    blas = blas_libraries(ctx)
    threads = max((lib.get("num_threads") or 0 for lib in blas), default=0) or None
    rng = ctx.rng()
    results = []
    with ctx.phase(f"{NAME} host"):
        for i, n in enumerate(sizes):
            ctx.report(i / len(sizes), f"n={n}")
            a = rng.standard_normal((n, n), dtype=np.float64).astype(dtype, copy=False)
            b = rng.standard_normal((n, n), dtype=np.float64).astype(dtype, copy=False)
            with ctx.span() as span:
                a @ b  # warm-up: page faults, BLAS thread start
                times = []
                for _ in range(repeats):
                    t = time.perf_counter()
                    a @ b
                    times.append(time.perf_counter() - t)
            flops = 2.0 * n**3
            seconds = median(times)
            gflops = flops / seconds / 1e9 if seconds else None
            fraction = gflops / peak.gflops if gflops is not None and peak.gflops else None
            results.append(
                make_result(
                    ctx,
                    name=NAME,
                    device="host",
                    params={"n": n, "dtype": dtype},
                    times=times,
                    span=span,
                    throughput=gflops,
                    throughput_unit="GFLOP/s",
                    details={
                        "variant": f"n={n}",
                        "flops": flops,
                        "gflops": gflops,
                        "gflops_best": flops / min(times) / 1e9 if times else None,
                        "peak_gflops": peak.gflops,
                        "fraction_of_peak": fraction,
                        "peak_estimate": peak.how,
                        "peak": peak.to_dict(),
                        "blas": blas,
                        "blas_threads": threads,
                    },
                )
            )
            del a, b
    ctx.report(1.0, "done")
    return results


WORKLOAD = Workload(
    name=NAME,
    description="NumPy matrix products: GFLOP/s and the fraction of the CPU's peak",
    run=run,
    needs_tensorflow=False,
    per_device=False,
    quick_params={"sizes": [1000, 2000, 3000], "repeats": 3, "dtype": "float32"},
    full_params={"sizes": [1000, 2000, 3000], "repeats": 7, "dtype": "float32"},
)
