"""What watching costs INSIDE one process: tfres.monitor at 10 Hz against no monitor and MLflow.

    python benchmarks/overhead_fit.py        # full: 60 s sampler run, 7 pairs per comparison
    python benchmarks/overhead_fit.py --quick # 10 s sampler run, 5 pairs, shorter fits

Measures, all in this one process, side by side:

a. the sampler's own CPU time at 10 Hz while it watches a process with TensorFlow loaded
   (thread CPU time around each sample, ``time.thread_time``), as % of one core;
b. a Keras ``model.fit`` on the CPU without and with ``tfres.monitor(interval=0.1)``,
   A/B interleaved (ABBA order), the median over pairs of the throughput ratio;
c. the same fit under MLflow's system-metrics monitor (``mlflow.start_run(
   log_system_metrics=True)``, sampling every 10 s, its default, and every 1 s), with how many
   points each tool recorded during the fit (the time resolution);
d. ``tfres.callbacks.ResourceMonitor(sample=False)`` (step timing only) against no callback,
   on a fit with many short steps, where a per-batch cost would show.

Prints a markdown table. Needs tensorflow and, for (c), mlflow-skinny (``pip install
'tfres[bench]'``); without mlflow, (c) is reported as skipped.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# MLflow 3 refuses a plain folder as tracking store unless told; a folder keeps the
# benchmark self-contained (no database server or SQLAlchemy needed)
os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")


def sampler_cost(seconds: float) -> dict[str, float]:
    """(a) CPU the sampling thread used per second of wall time, at 10 Hz."""
    import tfres

    start_process = time.process_time()
    t0 = time.perf_counter()
    with tfres.Sampler(0.1) as s:
        time.sleep(seconds)
    wall = time.perf_counter() - t0
    process = time.process_time() - start_process
    return {
        "wall_seconds": wall,
        "samples": s.count,
        "thread_cpu_seconds": s.cpu_seconds,
        "thread_percent_of_core": 100.0 * s.cpu_seconds / wall,
        "process_percent_of_core": 100.0 * process / wall,
        "per_sample_ms": 1000.0 * s.cpu_seconds / max(1, s.count),
        # the scans of the other processes' CPU (start, every 3 s, stop; in the thread CPU)
        "others_scans": s.others.scans if s.others else 0,
        "others_scan_ms": 1000.0 * s.others.cost_seconds / max(1, s.others.scans)
        if s.others
        else 0.0,
    }


def make_fit(samples: int, batch_size: int, width: int) -> Callable[..., float]:
    """A Keras fit on random data; returns a function giving samples per second."""
    import keras
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.normal(size=(samples, 64)).astype("float32")
    y = rng.normal(size=(samples, 1)).astype("float32")
    model = keras.Sequential(
        [
            keras.Input((64,)),
            keras.layers.Dense(width, activation="relu"),
            keras.layers.Dense(width, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0)  # trace and warm up

    def fit(callbacks: list[Any] | None = None) -> float:
        t = time.perf_counter()
        model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0, callbacks=callbacks or [])
        return samples / (time.perf_counter() - t)

    return fit


def ab_pairs(
    pairs: int, a: Callable[[], float], b: Callable[[], float]
) -> tuple[list[float], list[float]]:
    """Throughputs of A and B, interleaved A B, B A, A B, ... so drift hits both alike."""
    xs: list[float] = []
    ys: list[float] = []
    for i in range(pairs):
        if i % 2 == 0:
            xs.append(a())
            ys.append(b())
        else:
            ys.append(b())
            xs.append(a())
    return xs, ys


def summarize(name: str, base: list[float], other: list[float], **extra: Any) -> dict[str, Any]:
    ratios = [o / b for b, o in zip(base, other, strict=True)]
    return {
        "name": name,
        "pairs": len(ratios),
        "base_median": statistics.median(base),
        "other_median": statistics.median(other),
        "ratio_median": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        **extra,
    }


def with_tfres(fit: Callable[..., float], interval: float, points: list[int]) -> float:
    import tfres

    with tfres.monitor(interval=interval, store=False) as m:
        throughput = fit()
    points.append(len(m.record.samples))
    return throughput


def with_mlflow(fit: Callable[..., float], interval: float, points: list[int]) -> float:
    import mlflow

    mlflow.set_system_metrics_sampling_interval(interval)
    mlflow.set_system_metrics_samples_before_logging(1)
    with mlflow.start_run(log_system_metrics=True) as run:
        throughput = fit()
    history = mlflow.MlflowClient().get_metric_history(
        run.info.run_id, "system/cpu_utilization_percentage"
    )
    points.append(len(history))
    return throughput


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 s sampler run, 5 pairs")
    parser.add_argument(
        "--pairs", type=int, default=None, help="A/B pairs per comparison (default: 7, quick 5)"
    )
    args = parser.parse_args(argv)
    quick = args.quick
    pairs = args.pairs or (5 if quick else 7)
    logging.getLogger("mlflow").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")

    import tensorflow as tf  # noqa: F401  (a TF process is what the sampler watches)

    fit_samples = 150_000 if quick else 300_000
    fit = make_fit(samples=fit_samples, batch_size=256, width=256)
    rows: list[dict[str, Any]] = []

    cost = sampler_cost(10.0 if quick else 60.0)

    points_tfres: list[int] = []
    base, other = ab_pairs(pairs, fit, lambda: with_tfres(fit, 0.1, points_tfres))
    rows.append(
        summarize("tfres.watch.monitor, 10 Hz", base, other, interval=0.1, points=points_tfres)
    )

    try:
        import mlflow

        tracking = tempfile.mkdtemp(prefix="tfres-bench-mlflow-")
        mlflow.set_tracking_uri("file://" + tracking)
        mlflow.set_experiment("tfres-overhead")
        for interval in (10.0, 1.0):
            points: list[int] = []
            base, other = ab_pairs(
                pairs, fit, lambda iv=interval, p=points: with_mlflow(fit, iv, p)
            )
            rows.append(
                summarize(
                    f"MLflow system metrics, every {interval:g} s",
                    base,
                    other,
                    interval=interval,
                    points=points,
                )
            )
    except ImportError:
        rows.append({"name": "MLflow system metrics", "skipped": "mlflow is not installed"})

    import tfres

    short_samples = 24_000 if quick else 48_000
    short = make_fit(samples=short_samples, batch_size=16, width=32)
    base, other = ab_pairs(
        pairs, short, lambda: short([tfres.callbacks.ResourceMonitor(sample=False, store=False)])
    )
    steps = short_samples // 16
    rows.append(summarize(f"ResourceMonitor(sample=False), {steps} steps", base, other))

    print(f"## tfres overhead ({'quick' if quick else 'full'} run)\n")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, tensorflow {tf.__version__}\n")
    print("### a. the sampler's own CPU at 10 Hz\n")
    print(
        "| run | samples | sampler thread CPU | % of one core | per sample | process CPU "
        "| other-process scans |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {cost['wall_seconds']:.1f} s | {cost['samples']} | "
        f"{cost['thread_cpu_seconds']:.3f} s | **{cost['thread_percent_of_core']:.2f}%** | "
        f"{cost['per_sample_ms']:.2f} ms | {cost['process_percent_of_core']:.2f}% "
        f"| {cost['others_scans']} x {cost['others_scan_ms']:.2f} ms |"
    )
    print("\n### b-d. Keras model.fit throughput, A/B interleaved\n")
    print(
        "| watched by | pairs | samples/s without | samples/s with | ratio (median) "
        "| ratio min-max | points recorded per fit |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        if "skipped" in row:
            print(f"| {row['name']} | skipped: {row['skipped']} | | | | | |")
            continue
        pts = row.get("points")
        pts_text = f"{statistics.median(pts):.0f}" if pts else "n/a"
        print(
            f"| {row['name']} | {row['pairs']} | {row['base_median']:.0f} | "
            f"{row['other_median']:.0f} | **{row['ratio_median']:.3f}** | "
            f"{row['ratio_min']:.3f}-{row['ratio_max']:.3f} | {pts_text} |"
        )
    fit_seconds = fit_samples / rows[0]["base_median"]
    print(f"\nOne fit ({fit_samples} samples) takes about {fit_seconds:.1f} s without a monitor.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
