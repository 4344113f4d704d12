"""Do ``tfres bench``'s cpu_matmul figures agree with NumPy timed by hand?

For each matrix size, rounds alternate (A/B interleaved, so machine load hits both alike):

- A: ``tfres.bench(only=["cpu_matmul"])`` at that size: the real public path, with the
  sampler running, its GFLOP/s is 2 n^3 / median seconds of its repeats;
- B: the same product timed by hand: ``a @ b`` on fresh random float32 matrices, one warm-up,
  then the same number of ``time.perf_counter()``-timed repeats, median.

The table gives the median over rounds of each, and the median of the per-round ratios
A/B (each round's pair ran back to back, so it saw the same load); they agree when that
ratio is within 10% of 1. Prints a markdown table; exits 1 when a size disagrees.

    python benchmarks/bench_accuracy.py            # sizes 1000, 2000, 3000; 9 rounds
    python benchmarks/bench_accuracy.py --quick    # sizes 1000, 2000; 5 rounds
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

TOLERANCE = 0.10


def hand_timed_gflops(n: int, repeats: int, seed: int) -> float:
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype("float32")
    b = rng.standard_normal((n, n)).astype("float32")
    a @ b  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t)
    return 2.0 * n**3 / statistics.median(times) / 1e9


def tfres_gflops(n: int, repeats: int) -> float:
    import tfres

    record = tfres.bench(
        only=["cpu_matmul"],
        params={"cpu_matmul": {"sizes": [n], "repeats": repeats, "dtype": "float32"}},
        store=False,
    )
    (result,) = record.workloads
    if result["error"]:
        raise SystemExit(f"cpu_matmul failed: {result['error']}")
    return float(result["throughput"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 sizes, 5 rounds")
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=5, help="timed products per measurement")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([1000, 2000] if args.quick else [1000, 2000, 3000])
    rounds = args.rounds or (5 if args.quick else 9)

    rows = []
    for n in sizes:
        a_runs: list[float] = []
        b_runs: list[float] = []
        for r in range(rounds):
            # alternate which goes first, so neither always gets the warmer caches
            if r % 2 == 0:
                a_runs.append(tfres_gflops(n, args.repeats))
                b_runs.append(hand_timed_gflops(n, args.repeats, seed=r))
            else:
                b_runs.append(hand_timed_gflops(n, args.repeats, seed=r))
                a_runs.append(tfres_gflops(n, args.repeats))
            print(
                f"n={n} round {r + 1}/{rounds}: tfres {a_runs[-1]:.1f}, "
                f"hand {b_runs[-1]:.1f} GFLOP/s",
                file=sys.stderr,
            )
        a, b = statistics.median(a_runs), statistics.median(b_runs)
        paired = statistics.median(x / y for x, y in zip(a_runs, b_runs, strict=True))
        rows.append((n, a, min(a_runs), max(a_runs), b, min(b_runs), max(b_runs), paired))

    print(
        f"cpu_matmul vs NumPy by hand: float32, {args.repeats} repeats per measurement, "
        f"{rounds} interleaved rounds; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    print()
    print(
        "| n | tfres cpu_matmul GFLOP/s (min-max) | NumPy by hand GFLOP/s (min-max) "
        "| ratio (median of rounds) | within 10% |"
    )
    print("|---:|---:|---:|---:|:---:|")
    ok = True
    for n, a, alo, ahi, b, blo, bhi, ratio in rows:
        agree = abs(ratio - 1) <= TOLERANCE
        ok &= agree
        print(
            f"| {n} | {a:.1f} ({alo:.1f}-{ahi:.1f}) | {b:.1f} ({blo:.1f}-{bhi:.1f}) "
            f"| {ratio:.3f} | {'yes' if agree else 'NO'} |"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
