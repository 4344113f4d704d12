"""Scenario: an input pipeline with an injected per-element delay.

The delay is set relative to the measured compute time of one training step so that input
wait is ``--fraction`` of the step time (0.25, 0.5, 0.75). Known cause: input-bound.

The reference the runner checks tfres against (``alone_fraction``) is measured apart from the
run tfres watches: the same pipeline iterated ALONE in its own loop (seconds per batch, no
training) and the training step ALONE (``_common.calibrate``); with no prefetch the two do not
overlap, so input wait should be in / (in + step). ``injected_fraction`` (the sleeps timed
around each call over the loop's wall time) is also reported, but it is a stopwatch around
the same sleep the run contains, not an independent check.

    tfres run -- python benchmarks/scenarios/input_bound.py --fraction 0.5
"""

from __future__ import annotations

import argparse
import statistics
import time

import _common

ELEMENTS_PER_BATCH = 4
ALONE_BATCHES = 8


def seconds_per_batch_alone(ds) -> float:
    """Median seconds to get one batch from ``ds`` iterated on its own (the first one, which
    starts the generator, is dropped)."""
    it = iter(ds)
    next(it)
    times = []
    for _ in range(ALONE_BATCHES):
        t = time.perf_counter()
        next(it)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fraction", type=float, default=0.5, help="input wait to inject (0-1)")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch", type=int, default=2048)
    parser.add_argument(
        "--measure", action="store_true", help="also run tfres.steps.measure_input_wait"
    )
    args = parser.parse_args()

    import tensorflow as tf

    import tfres.watch.steps

    step, x, y = _common.build(args.batch)
    compute = _common.calibrate(step, x, y)
    delay = compute * args.fraction / (1.0 - args.fraction)
    per_element = delay / ELEMENTS_PER_BATCH
    injected = [0.0]

    def slow_elements():  # the "preprocessing": a fixed sleep per element
        i = 0
        while True:
            t = time.perf_counter()
            time.sleep(per_element)
            injected[0] += time.perf_counter() - t
            yield i
            i += 1

    def pipeline(batches: int) -> tf.data.Dataset:
        ds = tf.data.Dataset.from_generator(
            slow_elements, output_signature=tf.TensorSpec((), tf.int64)
        )
        ds = ds.batch(ELEMENTS_PER_BATCH).take(batches)
        # no prefetch anywhere, so the delay sits on the critical path as injected (tf.data
        # would otherwise add a prefetch at the end and hide part of it)
        options = tf.data.Options()
        options.experimental_optimization.inject_prefetch = False
        options.autotune.enabled = False
        return ds.with_options(options)

    input_alone = seconds_per_batch_alone(pipeline(ALONE_BATCHES + 1))
    ds = pipeline(args.steps)

    timer = tfres.steps.StepTimer()
    injected[0] = 0.0
    t0 = time.perf_counter()
    for _ids in tfres.steps.timed(ds, timer=timer):
        float(step(x, y))  # the model trains on a cached batch; only the timing matters
    wall = time.perf_counter() - t0
    result = {
        "scenario": "input_bound",
        "target_fraction": args.fraction,
        "alone_fraction": input_alone / (input_alone + compute),
        "input_seconds_per_batch_alone": input_alone,
        "injected_fraction": injected[0] / wall,
        "timed_fraction": timer.input_wait_fraction,
        "compute_seconds_per_step": compute,
        "steps": len(timer.steps),
    }
    if args.measure:
        m = tfres.steps.measure_input_wait(
            ds, lambda ids: step(x, y), steps=min(args.steps, 15) - 2, warmup=1, repeats=3
        )
        result["guide_fraction"] = m.input_wait_fraction
    _common.report(**result)


if __name__ == "__main__":
    main()
