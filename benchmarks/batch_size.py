"""Is the batch-size finder right? Its answer against a brute-force sweep, on two models.

    python benchmarks/batch_size.py            # budget 1.25 GiB, fine sweep (~1.5% steps)
    python benchmarks/batch_size.py --quick    # coarser sweep, fewer steps per trial
    python benchmarks/batch_size.py --synthetic  # the search alone, on 3000 synthetic curves

For each model in benchmarks/batch_size_models.py (small: a 4096-wide layer, large: 32768):

1. ``tfres.find_batch_size`` with the budget (margin 0.9): its answer and how many trials;
2. brute force with the same isolated trials (``tfres.batchsize.measure_trial``): sizes
   doubling from 16 until one does not fit, then two passes of 8 evenly spaced sizes over
   the interval still open (one pass of 4 with --quick): the largest size that fits.

A finder answer passes when it fits and is within 10% of the brute-force answer, in at most
8 trials. The brute-force answer is the largest size seen to fit; the true boundary lies
between it and the next size swept (shown too). Near the boundary a size can fit in one run
and not in the next (the allocator's peak varies by a few percent), so both answers carry
that noise. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

HERE = Path(__file__).resolve().parent
MODELS = HERE / "batch_size_models.py"
MARGIN = 0.9


def brute_force(
    model: str, budget: str, *, passes: int, points: int, steps: int
) -> tuple[int, int]:
    """(the largest size that fits, trials run) by sweeping, with no search logic."""
    from tfres.batchsize.finder import measure_trial
    from tfres.batchsize.search import classify
    from tfres.budget.watchdog import parse_budget

    limit = parse_budget(budget) * MARGIN
    data = f"{MODELS}:make_data"
    trials = 0

    def fits(size: int) -> bool:
        nonlocal trials
        trials += 1
        trial = classify(
            measure_trial(model, data, size, budget=budget, steps_per_trial=steps), limit
        )
        print(f"    brute force {size:>6}: {trial.status}", file=sys.stderr)
        return trial.fits

    lo, size = 0, 16
    while fits(size):
        lo, size = size, size * 2
        if size > 65536:
            return lo, size, trials
    hi = size
    for _ in range(passes):
        step = max(1, (hi - lo) // (points + 1))
        grid = [lo + step * k for k in range(1, points + 1) if lo + step * k < hi]
        for size in grid:  # ascending: the first failure closes the interval
            if fits(size):
                lo = size
            else:
                hi = size
                break
    return lo, hi, trials


def synthetic(cases: int = 3000, seed: int = 2) -> dict[str, object]:
    """The search alone on synthetic memory curves: how close, in how many trials.

    Peak = base + k * size * (1 + c * size / max_size), with 1% noise per trial; a trial past
    the budget is stopped there (as the watchdog does). Cases whose answer is below 20 are
    left out (at sizes that small, 10% is less than one sample).
    """
    import random
    from collections import Counter

    from tfres.batchsize.search import Trial, search

    rng = random.Random(seed)
    within = total = 0
    counts: Counter[int] = Counter()
    for _ in range(cases):
        base = rng.uniform(300e6, 800e6)
        k = 10 ** rng.uniform(3, 7.5)
        budget = base * (1 + rng.uniform(0.05, 3))
        most = rng.choice([256, 1024, 4096, 65536])
        start = rng.choice([1, 8, 32, 64])
        curve = rng.uniform(0, 1)

        def peak(size: int, base=base, k=k, curve=curve, most=most) -> float:
            return base + k * size * (1 + curve * size / most)

        def run(size: int, budget=budget, peak=peak) -> Trial:
            m = peak(size) * (1 + rng.uniform(-0.01, 0.01))
            if m > budget:
                return Trial(size, "over-budget", peak_bytes=int(budget))
            return Trial(size, "ok", peak_bytes=int(m))

        limit = budget * MARGIN
        trials, _ = search(run, limit_bytes=limit, max_batch_size=most, start=start)
        truth = max((b for b in range(1, most + 1) if peak(b) <= limit), default=0)
        if truth < 20:
            continue
        found = max((t.batch_size for t in trials if t.fits), default=0)
        total += 1
        within += abs(found - truth) / truth <= 0.10
        counts[len(trials)] += 1
    ordered = sorted(counts.elements())
    return {
        "cases": total,
        "within_10_percent": within,
        "max_trials": max(ordered),
        "median_trials": ordered[len(ordered) // 2],
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a coarser sweep, 1 step per trial")
    p.add_argument("--budget", default="1.25GiB")
    p.add_argument("--synthetic", action="store_true", help="only the search, on 3000 curves")
    args = p.parse_args()
    if args.synthetic:
        got = synthetic()
        print("| synthetic cases | answer within 10% | max trials | median trials |")
        print("|---|---|---|---|")
        print(
            f"| {got['cases']} | {got['within_10_percent']} "
            f"({got['within_10_percent'] / got['cases']:.1%}) | {got['max_trials']} | "
            f"{got['median_trials']} |"
        )
        return 0
    from tfres.batchsize.finder import find_batch_size

    passes, points, steps = (1, 4, 1) if args.quick else (2, 8, 3)
    rows = []
    for name in ("build_small", "build_large"):
        model = f"{MODELS}:{name}"
        print(f"{name}:", file=sys.stderr)
        t0 = time.monotonic()
        result = find_batch_size(
            model,
            f"{MODELS}:make_data",
            budget=args.budget,
            margin=MARGIN,
            steps_per_trial=steps,
            max_batch_size=65536,
            start_batch_size=16,
            on_trial_end=lambda t: print(
                f"    finder {t.batch_size:>6}: {t.status}", file=sys.stderr
            ),
        )
        finder_seconds = time.monotonic() - t0
        t0 = time.monotonic()
        truth, above, brute_trials = brute_force(
            model, args.budget, passes=passes, points=points, steps=steps
        )
        brute_seconds = time.monotonic() - t0
        found = result.largest_batch_size or 0
        error = abs(found - truth) / truth if truth else float("nan")
        ok = found > 0 and error <= 0.10 and len(result.trials) <= 8
        rows.append(
            (
                name,
                found,
                len(result.trials),
                finder_seconds,
                f"{truth} ({above} does not)",
                brute_trials,
                brute_seconds,
                error,
                ok,
                result.best_throughput_batch_size,
            )
        )
    print(f"\nbudget {args.budget}, margin {MARGIN:g}, {steps} timed steps per trial\n")
    print(
        "| model | finder answer | finder trials | finder s | brute force answer | "
        "brute trials | brute s | difference | pass (<=10%, <=8 trials) | best throughput |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, found, n, fs, truth, bn, bs, err, ok, best in rows:
        print(
            f"| {name} | {found} | {n} | {fs:.0f} | {truth} | {bn} | {bs:.0f} | "
            f"{err:.1%} | {'yes' if ok else 'NO'} | {best} |"
        )
    return 0 if all(r[8] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
