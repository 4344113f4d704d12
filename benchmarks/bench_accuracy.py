"""Is the "% of peak" that ``tfres bench`` prints right? Checked against figures it does not make.

``tfres bench``'s cpu_matmul reports GFLOP/s and a fraction of the CPU's theoretical peak
(physical cores x the clock read x FLOPs/cycle of the core family, ``tfres.workloads.peak``).
Timing ``a @ b`` against the same ``a @ b`` would only show that a stopwatch works, so this
script checks the parts a user reads, each against something independent of it:

1. the clock: the one the peak uses (read from cpufreq or /proc/cpuinfo) against a clock
   MEASURED here, by timing a chain of dependent integer adds (one per cycle on every x86
   core since the Pentium Pro) compiled with the system C compiler; skipped without one;
2. the peak: matrix products through two BLAS paths that share no code with tfres or each
   other, NumPy's BLAS (OpenBLAS in the wheels) and TensorFlow's ``tf.linalg.matmul`` (Eigen),
   in float32 and float64. No real product may beat the peak computed at the highest clock
   the core runs at; if one does, the FLOPs/cycle in the table are too low. The fraction of
   peak each path reaches is printed: 60-95% is usual for a large GEMM on a quiet machine;
3. what users see: ``tfres.bench(only=["cpu_matmul"])`` once per size, its fraction of peak
   next to the two independent figures.

Rounds alternate the paths (ABBA) so machine load hits both alike; figures are medians
over rounds of the best-of-``repeats`` time (the best repeat is the one least disturbed by
other work: a peak check wants the machine's capability, not its average under load).
Exits 1 when a product beats the peak at the higher of the two clocks.

    python benchmarks/bench_accuracy.py            # n = 2000, 3000; 6 rounds
    python benchmarks/bench_accuracy.py --quick    # n = 2000; 4 rounds
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

CLOCK_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]); unsigned long x = 0; struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {  /* 10 dependent adds: 10 cycles per iteration */
        __asm__ volatile("add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\t"
                         "add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0" : "+r"(x));
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
    printf("%.1f %lu\n", 10.0 * n / s / 1e6, x);
    return 0;
}
"""


def measured_clock_mhz(runs: int = 7) -> float | None:
    """The core clock from a timed chain of dependent adds: the fastest of ``runs`` (other
    work on the core only ever makes a run slower). None without a C compiler or off x86."""
    import platform

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp, "clock.c"), Path(tmp, "clock")
        src.write_text(CLOCK_C)
        subprocess.run([cc, "-O2", "-o", str(exe), str(src)], check=True)
        readings = [
            float(
                subprocess.run(
                    [str(exe), "300000000"], capture_output=True, text=True, check=True
                ).stdout.split()[0]
            )
            for _ in range(runs)
        ]
    return max(readings)


def _best_seconds(product: Callable[[], object], repeats: int) -> float:
    product()  # warm-up: page faults, thread pools
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        product()
        best = min(best, time.perf_counter() - t)
    return best


def numpy_gflops(n: int, dtype: str, repeats: int, seed: int) -> float:
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    return 2.0 * n**3 / _best_seconds(lambda: a @ b, repeats) / 1e9


def tensorflow_gflops(n: int, dtype: str, repeats: int, seed: int) -> float:
    import tensorflow as tf

    tf.random.set_seed(seed)
    a = tf.random.normal((n, n), dtype=dtype)
    b = tf.random.normal((n, n), dtype=dtype)
    return 2.0 * n**3 / _best_seconds(lambda: tf.linalg.matmul(a, b).numpy(), repeats) / 1e9


def tfres_bench(n: int, dtype: str) -> dict:
    import tfres

    record = tfres.bench(
        only=["cpu_matmul"],
        params={"cpu_matmul": {"sizes": [n], "repeats": 5, "dtype": dtype}},
        store=False,
    )
    (result,) = record.workloads
    if result["error"]:
        raise SystemExit(f"cpu_matmul failed: {result['error']}")
    return dict(result["details"])


def measure(sizes: list[int], dtypes: list[str], rounds: int, repeats: int) -> list[dict]:
    rows = []
    for dtype in dtypes:
        for n in sizes:
            runs: dict[str, list[float]] = {"numpy": [], "tensorflow": []}
            paths = {"numpy": numpy_gflops, "tensorflow": tensorflow_gflops}
            for r in range(rounds):
                order = ["numpy", "tensorflow"] if r % 4 in (0, 3) else ["tensorflow", "numpy"]
                for name in order:
                    runs[name].append(paths[name](n, dtype, repeats, seed=r))
                print(
                    f"{dtype} n={n} round {r + 1}/{rounds}: numpy {runs['numpy'][-1]:.1f}, "
                    f"tensorflow {runs['tensorflow'][-1]:.1f} GFLOP/s",
                    file=sys.stderr,
                )
            shown = tfres_bench(n, dtype)
            rows.append({"dtype": dtype, "n": n, "runs": runs, "tfres": shown})
    return rows


def _fraction(gflops: float, peak: float | None) -> str:
    return f"{gflops / peak:.0%}" if peak else "n/a"


def report(
    rows: list[dict],
    peaks: dict,
    clock_read: float | None,
    clock_measured: float | None,
    load_before: float,
    seconds: float,
) -> bool:
    fastest = max(c for c in (clock_read, clock_measured) if c) if clock_read else None
    print(
        f"2 BLAS paths vs the peak tfres computes; {os.cpu_count()} CPUs, load average "
        f"{load_before:.2f} before and {os.getloadavg()[0]:.2f} after, {seconds:.0f} s"
    )
    print()
    print("| input | value |")
    print("|---|---|")
    for dtype, p in peaks.items():
        print(f"| peak {dtype} (tfres) | {p.gflops} GFLOP/s = {p.how} |")
    measured = f"{clock_measured:.0f} MHz" if clock_measured else "not measured (no C compiler)"
    print(f"| clock read (used by the peak) | {clock_read} MHz |")
    print(f"| clock measured, 10 dependent adds per loop, best of 7 | {measured} |")
    print()
    print(
        "| dtype | n | peak (read clock) | peak (highest clock) | NumPy/OpenBLAS GFLOP/s "
        "(min-max) | % of peak | TF/Eigen GFLOP/s (min-max) | % of peak "
        "| best run / peak (read clock) | tfres bench shows | under the peak |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|:---:|")
    ok = True
    for row in rows:
        p = peaks[row["dtype"]]
        top = p.gflops * fastest / clock_read if p.gflops and fastest and clock_read else None
        cells, best = [], 0.0
        for name in ("numpy", "tensorflow"):
            runs = row["runs"][name]
            med = statistics.median(runs)
            best = max(best, max(runs))
            cells.append(
                f"{med:.1f} ({min(runs):.1f}-{max(runs):.1f}) | {_fraction(med, p.gflops)}"
            )
        under = top is None or best <= top
        cells.append(_fraction(best, p.gflops))
        ok &= under
        t = row["tfres"]
        shows = (
            f"{t['gflops']:.1f} GFLOP/s, {t['fraction_of_peak']:.0%} of {t['peak_gflops']:.0f}"
            if t.get("fraction_of_peak") is not None
            else "no peak"
        )
        verdict = "n/a" if top is None else ("yes" if under else "NO")
        top_cell = f"{top:.1f}" if top else "n/a"
        print(
            f"| {row['dtype']} | {row['n']} | {p.gflops} | {top_cell} | "
            + " | ".join(cells)
            + f" | {shows} | {verdict} |"
        )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="n = 2000, 4 rounds")
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=3, help="timed products per measurement")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([2000] if args.quick else [2000, 3000])
    rounds = args.rounds or (4 if args.quick else 6)
    load_before, start = os.getloadavg()[0], time.monotonic()

    from tfres.backends.cpu_peak import max_clock
    from tfres.workloads.peak import estimate_peak

    peaks = {dtype: estimate_peak(dtype=dtype) for dtype in args.dtypes}
    read = max_clock()
    clock_measured = measured_clock_mhz()
    rows = measure(sizes, args.dtypes, rounds, args.repeats)
    ok = report(
        rows,
        peaks,
        read.mhz if read else None,
        clock_measured,
        load_before,
        time.monotonic() - start,
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
