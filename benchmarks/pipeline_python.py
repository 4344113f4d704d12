"""What timing tf.data's Python costs a custom loop (``_tfres_pyinput.PipelinePython``).

Under ``tfres run`` every ``py_func`` TensorFlow makes goes through a wrapper that times it on
tf.data's threads, and each call of the loop's function takes the spans that overlap it. This
runs one custom loop over a ``from_generator`` pipeline (one ``py_func`` per element, 64 per
batch) in rounds, bare and with the recorder on, in turns (AB BA AB...), in one process, and
reports the median steps per second of each and their ratio; then the median of each round's
own ratio (its two loops ran back to back, so a machine that changes speed between rounds
moves both), and the same for the process's CPU seconds a step (every thread: the loop's,
tf.data's, the generator's). The loop's step is kept short
(a small matmul), so the recorder's share of it is as large as it gets in a real loop; a
cheap generator keeps the pipeline ahead of the step.

Then, one call at a time (medians of 3000): what the wrapper adds to a ``py_func`` call
(against the same call bare), and what one call of the loop's function pays to take 0, 64
or 256 spans.

Nothing here imports tfres's package: the recorder is loaded from
``src/tfres/devices/inject`` as the child loads it.

    .venv/bin/python benchmarks/pipeline_python.py [--rounds 11] [--steps 200] [--batch 64]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src/tfres/devices/inject"))
from _tfres_pyinput import PipelinePython  # noqa: E402


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be 1 or more")
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=_positive, default=11, help="pairs of loops (11)")
    parser.add_argument("--steps", type=_positive, default=200, help="steps per loop (200)")
    parser.add_argument("--batch", type=_positive, default=64, help="elements per batch (64)")
    args = parser.parse_args()

    import numpy as np
    import tensorflow as tf
    from tensorflow.python.ops import script_ops

    def examples():
        rng = np.random.default_rng(0)
        while True:
            yield rng.random(32, dtype=np.float32)

    spec = tf.TensorSpec((32,), tf.float32)
    weights = tf.Variable(tf.random.normal((32, 32)))

    @tf.function
    def step(x):
        weights.assign_add(1e-6 * tf.matmul(x, x, transpose_a=True))
        return tf.reduce_sum(x)

    recorder = PipelinePython(time.perf_counter)
    bare = script_ops.FuncRegistry.__call__
    recorder.patch(script_ops)
    timed = script_ops.FuncRegistry.__call__
    recorder.start()

    def loop(on: bool) -> tuple[float, float]:
        """Steps per second, and the process's CPU seconds a step."""
        script_ops.FuncRegistry.__call__ = timed if on else bare
        data = tf.data.Dataset.from_generator(examples, output_signature=spec).batch(args.batch)
        start, cpu = time.perf_counter(), time.process_time()
        for i, x in enumerate(data):
            if i == args.steps:
                break
            call = time.perf_counter()
            step(x)
            if on:
                recorder.take(call, time.perf_counter())
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        return args.steps / wall, cpu / args.steps

    loop(False)  # trace the step, warm the pipeline
    rates: dict[bool, list[float]] = {False: [], True: []}
    cpus: dict[bool, list[float]] = {False: [], True: []}
    for r in range(args.rounds):
        for on in (False, True) if r % 2 == 0 else (True, False):
            rate, cpu = loop(on)
            rates[on].append(rate)
            cpus[on].append(cpu)
    script_ops.FuncRegistry.__call__ = bare
    paired = [t / b for t, b in zip(rates[True], rates[False], strict=True)]
    paired_cpu = [t / b for t, b in zip(cpus[True], cpus[False], strict=True)]
    plain, with_recorder = statistics.median(rates[False]), statistics.median(rates[True])
    print(f"loop over from_generator, {args.batch} py_funcs a step, {args.rounds} rounds each")
    print(
        f"  bare           {plain:8.1f} steps/s  ({min(rates[False]):.1f}-{max(rates[False]):.1f})"
    )
    print(
        f"  with recorder  {with_recorder:8.1f} steps/s  "
        f"({min(rates[True]):.1f}-{max(rates[True]):.1f})"
    )
    print(f"  ratio          {with_recorder / plain:8.3f}  (1.000 = no cost)")
    print(f"  each round's own ratio, median {_quartiles(paired)}  (under 1: slower)")
    print(
        f"  CPU ms a step  {1e3 * statistics.median(cpus[False]):8.2f} bare, "
        f"{1e3 * statistics.median(cpus[True]):.2f} with the recorder; each round's own "
        f"ratio, median {_quartiles(paired_cpu)}  (over 1: more CPU)"
    )
    _one_call_at_a_time()
    return 0


def _quartiles(ratios: list[float]) -> str:
    """``median (lower quartile-upper quartile)`` of ``ratios``."""
    if len(ratios) < 2:
        return f"{ratios[0]:.3f}"
    low, _, high = statistics.quantiles(ratios, n=4)
    return f"{statistics.median(ratios):.3f} ({low:.3f}-{high:.3f})"


def _one_call_at_a_time(calls: int = 3000) -> None:
    def median_us(run) -> float:  # noqa: ANN001
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        return 1e6 * statistics.median(times)

    class Registry:
        def __call__(self, token, device, args):  # noqa: ANN001, ANN204
            return args

    class ScriptOps:
        FuncRegistry = Registry

    registry = Registry()
    bare = median_us(lambda: registry("token", "device", ()))
    recorder = PipelinePython(time.perf_counter)
    recorder.patch(ScriptOps)
    recorder._loop_thread = -1  # started, from a thread that is not this one
    wrapped = median_us(lambda: (registry("token", "device", ()), recorder.spans.clear()))
    print(f"one py_func call: {bare:.2f} us bare, {wrapped:.2f} us wrapped (and its span kept)")
    for n in (0, 64, 256):
        now = time.perf_counter()
        spans = [(now + i * 1e-4, now + i * 1e-4 + 5e-5) for i in range(n)]

        def take(spans: list = spans, now: float = now) -> None:
            recorder.spans[:] = spans  # refilled each time (under 2 us of the figure)
            recorder.take(now, now + 1.0)

        print(f"one call of the loop's function, {n:3d} spans to take: {median_us(take):.1f} us")


if __name__ == "__main__":
    sys.exit(main())
