"""What sampling a custom loop's Python input costs the loop, by the sampler's interval.

``tfres run`` times a custom loop's Python input by sampling the loop thread's stack in
the gaps between calls of its hot function (``_tfres_pyinput.GapSampler``, by SIGALRM). Each
sample costs the thread a signal and a handler call, so the loop's Python runs slower in the
gaps that are sampled. Until session 52 every gap was sampled every 0.5 ms, whatever the
step; in session 52 about 100 times per step of the loop, and since session 53 about 40
times (``sample_seconds``, ``STEP_SAMPLES``), every 0.5 to 5 ms. Here a batch's bare time
stands for the step (a loop's step is longer: its call as well).

For each kind of batch, each round makes one batch bare and one under each interval, in
turns (the order rotated a place each round); per interval it reports the median of the
batch's time over bare (what the sampling slows the program) and the median and 90th
percentile of each batch's reading against that batch's own time (1.00 is right). Nothing
here imports tfres's package: the sampler is loaded from ``src/tfres/devices/inject`` as
the child loads it. Run it on a quiet machine: the slowdowns are a few percent.

    .venv/bin/python benchmarks/gap_interval.py [--rounds 25]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src/tfres/devices/inject"))
sys.path.insert(0, str(HERE))
from _tfres_pyinput import STEP_SAMPLES, GapSampler, sample_seconds  # noqa: E402
from gap_timer import _rounds, per_sample_python, random_walk  # noqa: E402


def drum_onsets(items: int) -> Callable[[], Iterator[np.ndarray]]:
    """Int16 PCM decoded, a short-time spectrum, spectral flux and a Python peak-picking
    loop per item (a drum-transcription loop's input, ``unseen60``'s tape loop)."""

    def batches() -> Iterator[np.ndarray]:
        rng = np.random.default_rng(0)
        window = np.hanning(256)
        while True:
            out = []
            for _ in range(items):
                pcm = (rng.normal(size=4000) * 8000).astype(np.int16)
                x = pcm.astype(np.float32) / 32768
                frames = np.lib.stride_tricks.sliding_window_view(x, 256)[::125]
                spec = np.abs(np.fft.rfft(frames * window, axis=1))[:, :24]
                flux = np.maximum(0, np.diff(spec, axis=0)).sum(axis=1)
                mean = flux.mean()
                peaks = [
                    i
                    for i in range(1, len(flux) - 1)
                    if flux[i] > flux[i - 1] and flux[i] >= flux[i + 1] and flux[i] > mean
                ]
                for _ in range(300):  # per-onset bookkeeping in Python
                    math.sqrt(len(peaks) + 1.0)
                out.append(spec)
            yield np.stack(out)

    return batches


def _timed(gen: Iterator, sampler: GapSampler | None, every: float | None):
    if sampler is not None:
        sampler.start(loop_frame=sys._getframe(), every=every)
    start = time.perf_counter()
    next(gen)
    took = time.perf_counter() - start
    reading = sampler.stop() if sampler is not None else None
    return took, (reading.seconds() if reading is not None else None)


def compare(make: Callable[[], Iterator], rounds: int) -> tuple[float, dict[str, dict]]:
    gen = make()
    next(gen)  # warm
    bare = statistics.median(_timed(gen, None, None)[0] for _ in range(3))
    s52 = sample_seconds(bare, per_step=100)
    intervals = {
        "bare": None,
        "0.5 ms (until s52)": 0.0005,
        "1 ms": 0.001,
        "2 ms": 0.002,
        f"step/100 ({1e3 * s52:.2g} ms, s52)": s52,
        f"step/{STEP_SAMPLES} ({1e3 * sample_seconds(bare):.2g} ms)": sample_seconds(bare),
    }
    sampler = GapSampler()
    took: dict[str, list[float]] = {name: [] for name in intervals}
    ratios: dict[str, list[float]] = {name: [] for name in intervals}
    names = list(intervals)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            every = intervals[name]
            t, read = _timed(gen, sampler if every else None, every)
            took[name].append(t)
            if read is not None:
                ratios[name].append(read / t)
    base = statistics.median(took["bare"])
    rows = {}
    for name in names[1:]:
        errors = [abs(x - 1) for x in ratios[name]]
        rows[name] = {
            "slowdown": statistics.median(took[name]) / base,
            "read_over_own": statistics.median(ratios[name]) if ratios[name] else math.nan,
            "error_p90": statistics.quantiles(errors, n=10)[-1] if len(errors) > 1 else math.nan,
            "not_read": rounds - len(ratios[name]),
        }
    return base, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=_rounds, default=25, help="rounds per batch kind (25)")
    args = parser.parse_args()
    kinds = {
        "drum onsets, 32 items": drum_onsets(32),
        "drum onsets, 256 items": drum_onsets(256),
        "per-sample Python": per_sample_python,
        "random walk": random_walk,
    }
    print(
        f"{'batch':<24} {'bare ms':>8} {'interval':<24} {'slowdown':>9} {'read/own':>9}"
        f" {'error p90':>9} {'not read':>8}"
    )
    for kind, make in kinds.items():
        base, rows = compare(make, args.rounds)
        for name, row in rows.items():
            print(
                f"{kind:<24} {1e3 * base:>8.1f} {name:<24} {row['slowdown']:>9.3f}"
                f" {row['read_over_own']:>9.3f} {row['error_p90']:>9.3f} {row['not_read']:>8}"
            )


if __name__ == "__main__":
    main()
