"""CPU work beside device work, and the placement advisor, measured side by side.

Part 1, overlap: the ``overlap`` bench workload (JPEG decode + resize + flip feeding a small
Dense model) trained from the naive pipeline (sequential map, no prefetch) and from
``tfres.pipeline.input_pipeline`` (parallel map + prefetch), A/B interleaved, order swapped
every repeat, one warm-up epoch each. Reports median epoch time, the ratio naive/overlapped
(the issue asks >= 1.5x on a 2-core machine) and the overlap fraction of both.

Part 2, placement, synthetic: ``tfres.advise_placement`` on two logical CPU devices (CPU:0,
CPU:1) against the same functions timed directly (a plain loop under ``tf.device``). Logical
CPUs share the same cores, memory and thread pool, so the only honest "where" verdict between
them is "no clear winner"; the other rows make one device slower ON PURPOSE (a sleep or extra
matmuls keyed on the device name). They check the verdict's arithmetic (it picks the
smaller median, in either position), not that the advisor finds a real difference.

Part 3, placement, real contrast: what the advisor says about WHERE a call's time goes
(transfer vs compute), on functions whose split is known by construction and timed again
independently of the advisor's code:
- "copy-bound": a 64 MiB NumPy input reduced to its first row's sum (the copy onto the
  device is the work; the compute touches 1 KiB);
- "compute-bound": a chain of eight 1024 x 1024 matmuls on a 4 MiB input.
The direct timing converts the input with ``tf.constant`` under ``tf.device`` (its own loop),
calls the function on a tensor already on the device (another loop) and fetches the result
with ``np.asarray`` (a third loop); its transfer share is (in + out) / (in + compute + out).
The advisor agrees when it names the same dominant part and its share is within 15 points.

    python benchmarks/overlap.py --quick
    python benchmarks/overlap.py --json out/overlap.json

Prints markdown tables; exits 1 when the overlap ratio is below 1.5 or an advice disagrees
(with the direct timing, in part 2 or 3).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

TARGET_RATIO = 1.5


def overlap_part(quick: bool) -> dict[str, Any]:
    from tfres.workloads import WORKLOADS, WorkloadContext

    params = (
        {"examples": 256, "image_size": 512, "repeats": 5}
        if quick
        else {"examples": 512, "image_size": 512, "repeats": 11}
    )
    rows = WORKLOADS["overlap"].run(WorkloadContext(quick=True, params=params))
    by = {r["params"]["pipeline"]: r for r in rows}
    if any(r["error"] for r in rows):
        raise SystemExit(f"overlap workload failed: {[r['error'] for r in rows]}")
    naive, over = by["naive"], by["overlapped"]
    ratio = naive["seconds_median"] / over["seconds_median"]
    print(
        f"\n## Overlap: naive vs overlapped input pipeline ({params['repeats']} A/B pairs, "
        f"{naive['params']['examples']} examples per epoch)\n"
    )
    print(
        "| pipeline | median epoch s | min s | max s | examples/s | overlap fraction | "
        "preprocessing hidden |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in (naive, over):
        d = r["details"]
        hidden = d.get("hidden_fraction")
        print(
            f"| {r['params']['pipeline']} | {r['seconds_median']:.3f} | {r['seconds_min']:.3f} | "
            f"{r['seconds_max']:.3f} | {r['throughput']:.0f} | {d['overlap_fraction']:.2f} | "
            f"{'n/a' if hidden is None else f'{hidden:.0%}'} |"
        )
    verdict = "PASS" if ratio >= TARGET_RATIO else "FAIL"
    print(
        f"\n**overlapped is {ratio:.2f}x faster than naive** (target >= {TARGET_RATIO}x): {verdict}"
    )
    return {"params": params, "rows": rows, "ratio": ratio, "pass": ratio >= TARGET_RATIO}


def _cases(tf: Any) -> dict[str, Any]:
    def matmul(x: Any) -> Any:
        return tf.matmul(x, x)

    def on(device: str) -> bool:
        return tf.constant(0.0).device.endswith(device)

    def sleeps_on_cpu0(x: Any) -> Any:
        if on("CPU:0"):
            time.sleep(0.02)
        return tf.matmul(x, x)

    def sleeps_on_cpu1(x: Any) -> Any:
        if on("CPU:1"):
            time.sleep(0.02)
        return tf.matmul(x, x)

    def more_compute_on_cpu0(x: Any) -> Any:
        y = tf.matmul(x, x)
        for _ in range(6 if on("CPU:0") else 1):
            y = tf.matmul(y, x) * 1e-3
        return y

    return {
        "matmul (same work on both)": matmul,
        "+20 ms sleep on CPU:0": sleeps_on_cpu0,
        "+20 ms sleep on CPU:1": sleeps_on_cpu1,
        "6x the matmuls on CPU:0": more_compute_on_cpu0,
    }


def _direct(tf: Any, fn: Any, x: Any, devices: list[str], repeats: int) -> dict[str, float]:
    import numpy as np

    times: dict[str, list[float]] = {d: [] for d in devices}
    for i in range(repeats + 2):
        for d in devices if i % 2 == 0 else devices[::-1]:
            t = time.perf_counter()
            with tf.device("/" + d):
                out = fn(tf.identity(x))
            np.asarray(out)
            if i >= 2:
                times[d].append(time.perf_counter() - t)
    return {d: statistics.median(v) for d, v in times.items()}


def placement_part(quick: bool) -> dict[str, Any]:
    import numpy as np

    import tfres
    from tfres.backends.tf_placement import tensorflow
    from tfres.placement.advisor import CLEAR_RATIO

    tf = tensorflow()
    repeats = 7 if quick else 21
    x = np.random.default_rng(0).standard_normal((256, 256)).astype("float32")
    devices = ["CPU:0", "CPU:1"]
    print(
        f"\n## Placement advisor vs direct timing, synthetic (2 logical CPUs, {repeats} repeats "
        "each; the differences are made on purpose by device-name checks)\n"
    )
    print(
        "| function | advisor says | advisor ratio | direct CPU:0 ms | direct CPU:1 ms | "
        "direct says | agree |"
    )
    print("|---|---|---:|---:|---:|---|---|")
    results = []
    for name, fn in _cases(tf).items():
        advice = tfres.advise_placement(
            fn, x, devices=devices, repeats=repeats, placement_log=False
        )
        direct = _direct(tf, fn, x, devices, repeats)
        best = min(direct, key=direct.get)
        ratio = max(direct.values()) / min(direct.values())
        direct_clear = ratio >= CLEAR_RATIO
        said = advice.best_device if advice.clear else "no clear winner"
        direct_said = best if direct_clear else "no clear winner"
        agree = said == direct_said
        results.append(
            {"function": name, "advice": advice.to_dict(), "direct_seconds": direct, "agree": agree}
        )
        ms0, ms1 = direct["CPU:0"] * 1e3, direct["CPU:1"] * 1e3
        print(
            f"| {name} | {said} | {advice.speedup or 0:.2f}x | {ms0:.2f} | {ms1:.2f} | "
            f"{direct_said} ({ratio:.2f}x) | {'yes' if agree else 'NO'} |"
        )
    agreed = sum(r["agree"] for r in results)
    print(f"\n**advisor agrees with direct timing in {agreed} of {len(results)} synthetic cases**")
    return {"cases": results, "agreed": agreed, "total": len(results)}


def _contrast_cases(tf: Any) -> dict[str, tuple[Any, Any]]:
    import numpy as np

    rng = np.random.default_rng(1)
    big = rng.standard_normal((4096, 4096)).astype("float32")  # 64 MiB
    square = (rng.standard_normal((1024, 1024)) / 32).astype("float32")  # 4 MiB

    def first_row_sum(x: Any) -> Any:
        return tf.reduce_sum(x[0])

    def matmul_chain(x: Any) -> Any:
        y = x
        for _ in range(8):
            y = tf.matmul(y, x)
        return y

    return {
        "copy-bound: 64 MiB in, sum of one row": (first_row_sum, big),
        "compute-bound: 8 matmuls 1024^2, 4 MiB in": (matmul_chain, square),
    }


def _direct_parts(tf: Any, fn: Any, x: Any, device: str, repeats: int) -> dict[str, float]:
    """Transfer in, compute and transfer out, each timed in its own loop (not call_once)."""
    import numpy as np

    def timed(action: Any) -> float:
        action()  # warm-up
        runs = []
        for _ in range(repeats):
            t = time.perf_counter()
            action()
            runs.append(time.perf_counter() - t)
        return statistics.median(runs)

    def copy_in() -> Any:
        with tf.device("/" + device):
            return tf.constant(x)

    resident = copy_in()
    with tf.device("/" + device):
        result = fn(resident)
    return {
        "in": timed(copy_in),
        "compute": timed(lambda: _compute(tf, fn, resident, device)),  # eager CPU: synchronous
        "out": timed(lambda: np.asarray(result)),
    }


def _compute(tf: Any, fn: Any, resident: Any, device: str) -> Any:
    with tf.device("/" + device):
        out = fn(resident)
    return out


def contrast_part(quick: bool) -> dict[str, Any]:
    import tfres
    from tfres.backends.tf_placement import tensorflow

    tf = tensorflow()
    repeats = 5 if quick else 15
    print(
        f"\n## Placement advisor vs direct timing, real contrast: transfer vs compute "
        f"(CPU:0, {repeats} repeats each)\n"
    )
    print(
        "| function | advisor in / compute / out ms | advisor transfer share | direct in / "
        "compute / out ms | direct transfer share | dominant part (advisor, direct) | agree |"
    )
    print("|---|---:|---:|---:|---:|---|---|")
    results = []
    for name, (fn, x) in _contrast_cases(tf).items():
        advice = tfres.advise_placement(
            fn, x, devices=["CPU:0"], repeats=repeats, placement_log=False
        )
        t = advice.timing("CPU:0")
        adv = {
            "in": t.transfer_in_seconds or 0.0,
            "compute": t.compute_seconds or 0.0,
            "out": t.transfer_out_seconds or 0.0,
        }
        direct = _direct_parts(tf, fn, x, "CPU:0", repeats)
        shares = [(p["in"] + p["out"]) / sum(p.values()) for p in (adv, direct)]
        parts = ["transfer" if share > 0.5 else "compute" for share in shares]
        agree = parts[0] == parts[1] and abs(shares[0] - shares[1]) <= 0.15
        results.append(
            {
                "function": name,
                "advisor_seconds": adv,
                "direct_seconds": direct,
                "shares": shares,
                "agree": agree,
            }
        )
        ms = [
            " / ".join(f"{p[k] * 1e3:.2f}" for k in ("in", "compute", "out")) for p in (adv, direct)
        ]
        print(
            f"| {name} | {ms[0]} | {shares[0]:.0%} | {ms[1]} | {shares[1]:.0%} | "
            f"{parts[0]}, {parts[1]} | {'yes' if agree else 'NO'} |"
        )
    agreed = sum(r["agree"] for r in results)
    print(f"\n**advisor agrees with direct timing in {agreed} of {len(results)} real cases**")
    return {"cases": results, "agreed": agreed, "total": len(results)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer repeats and smaller epochs")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)

    from tfres.backends.tf_placement import ensure_logical_cpus

    ensure_logical_cpus(2)  # before the runtime starts: CPU:0 and CPU:1 for part 2
    started = time.perf_counter()
    overlap = overlap_part(args.quick)
    placement = placement_part(args.quick)
    contrast = contrast_part(args.quick)
    print(f"\n(took {time.perf_counter() - started:.0f} s{', quick mode' if args.quick else ''})")
    if args.json:
        from pathlib import Path

        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(
            json.dumps(
                {"overlap": overlap, "placement": placement, "contrast": contrast},
                indent=2,
                default=str,
            )
        )
    ok = overlap["pass"] and all(p["agreed"] == p["total"] for p in (placement, contrast))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
