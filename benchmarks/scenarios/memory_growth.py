"""Scenario: a training loop that keeps memory every step and grows toward its limit.

Each step appends ``--mib-per-step`` MiB (touched, so it is resident) to a Python list, the
way a loop that keeps every batch's tensors does. Run it under a memory budget the growth
will pass; known cause: memory pressure (the budget stops it, or RSS ends near the limit).

    tfres run --memory-budget 1GiB -- python benchmarks/scenarios/memory_growth.py
"""

from __future__ import annotations

import argparse
import time

import _common


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--mib-per-step", type=float, default=40.0)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()

    import numpy as np
    import tensorflow as tf

    import tfres.watch.steps

    step, x, y = _common.build(args.batch)
    _common.calibrate(step, x, y, n=2)
    kept = []
    ds = tf.data.Dataset.from_tensors((x, y)).repeat(args.steps)
    n = int(args.mib_per_step * 2**20 / 8)
    for xb, yb in tfres.steps.timed(ds):
        float(step(xb, yb))
        kept.append(np.ones(n))  # the "leak": every step's data stays referenced
        time.sleep(0.05)
    _common.report(scenario="memory_growth", kept_mib=len(kept) * args.mib_per_step)


if __name__ == "__main__":
    main()
