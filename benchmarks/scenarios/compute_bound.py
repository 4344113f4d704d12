"""Scenario: a clean compute-bound training loop (data cached in memory, no input wait).

Run as is, the known cause is "CPU-bound on all cores". The same program is the workload of
the constrained scenarios, where the cause comes from outside: thread variables
(``OMP_NUM_THREADS=1 TF_NUM_INTRAOP_THREADS=1``), one core by affinity (``taskset -c 0``)
or a CPU hog beside it (``yes > /dev/null``).

    tfres run -- python benchmarks/scenarios/compute_bound.py --seconds 8
"""

from __future__ import annotations

import argparse
import time

import _common


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=8.0, help="how long to train")
    parser.add_argument("--batch", type=int, default=1024)
    args = parser.parse_args()

    import tensorflow as tf

    import tfres.watch.steps

    step, x, y = _common.build(args.batch)
    compute = _common.calibrate(step, x, y, n=3)
    ds = tf.data.Dataset.from_tensors((x, y)).repeat()
    timer = tfres.steps.StepTimer()
    t0 = time.perf_counter()
    for xb, yb in tfres.steps.timed(ds, timer=timer):
        float(step(xb, yb))
        if time.perf_counter() - t0 >= args.seconds:
            break
    _common.report(
        scenario="compute_bound",
        compute_seconds_per_step=compute,
        steps=len(timer.steps),
        timed_fraction=timer.input_wait_fraction,
    )


if __name__ == "__main__":
    main()
