"""Scenario: an input pipeline with an injected per-element delay.

The delay is set relative to the measured compute time of one training step so that input
wait is ``--fraction`` of the step time (0.25, 0.5, 0.75). The truth reported is the delay
actually injected (``time.sleep`` durations as measured around each call) over the wall
time of the training loop. Known cause: input-bound.

    tfres run -- python benchmarks/scenarios/input_bound.py --fraction 0.5
"""

from __future__ import annotations

import argparse
import time

import _common

ELEMENTS_PER_BATCH = 4


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

    ds = tf.data.Dataset.from_generator(slow_elements, output_signature=tf.TensorSpec((), tf.int64))
    ds = ds.batch(ELEMENTS_PER_BATCH).take(args.steps)
    # no prefetch anywhere, so the delay sits on the critical path as injected (tf.data
    # would otherwise add a prefetch at the end and hide part of it)
    options = tf.data.Options()
    options.experimental_optimization.inject_prefetch = False
    options.autotune.enabled = False
    ds = ds.with_options(options)

    timer = tfres.steps.StepTimer()
    injected[0] = 0.0
    t0 = time.perf_counter()
    for _ids in tfres.steps.timed(ds, timer=timer):
        float(step(x, y))  # the model trains on a cached batch; only the timing matters
    wall = time.perf_counter() - t0
    result = {
        "scenario": "input_bound",
        "target_fraction": args.fraction,
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
