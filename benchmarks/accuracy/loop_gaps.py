"""Where a custom loop's step goes: before ``next()``, in ``next()``, in the call. The loop of
one accuracy script, timed with ``perf_counter`` around each part, over its real data and
over one cached batch, in one process, medians after ``SKIP_STEPS``. No tfres here.

The script runs as written up to the first line that starts with ``--cut`` (where it starts
to train); it must define its data function (``--data``) and its step (``--step``), called
as ``step(x, y)``.

    .venv/bin/python benchmarks/accuracy/loop_gaps.py \\
        benchmarks/accuracy/unseen/input_loop_dna_kmers.py \\
        --data dataset --step train_step --cut "train(dataset(), 3)" --steps 300
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", type=Path)
    parser.add_argument("--data", required=True, help="the script's data function")
    parser.add_argument("--step", required=True, help="the script's tf.function step")
    parser.add_argument("--cut", required=True, help="the line where the script starts to train")
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    if not args.script.is_file():
        parser.error(f"{args.script}: no such script")
    sys.path.insert(0, str(HERE))
    from truth import SKIP_STEPS

    if args.steps <= SKIP_STEPS:
        parser.error(f"--steps {args.steps}: give more than {SKIP_STEPS}")
    lines = args.script.read_text().splitlines()
    cut = next((i for i, ln in enumerate(lines) if ln.startswith(args.cut)), None)
    if cut is None:
        parser.error(f"{args.script} has no line starting with {args.cut!r}")
    scope: dict = {"__name__": "__loop_gaps__", "__file__": str(args.script)}
    exec(compile("\n".join(lines[:cut]), str(args.script), "exec"), scope)  # noqa: S102
    if args.data not in scope or args.step not in scope:
        parser.error(f"{args.script} defines no {args.data!r} or no {args.step!r}")

    import tensorflow as tf

    make_data, step = scope[args.data], scope[args.step]

    def probe(data: object, name: str) -> None:
        batches = iter(data)
        rows = []
        last = time.perf_counter()
        for _ in range(args.steps):
            t0 = time.perf_counter()
            x, y = next(batches)
            t1 = time.perf_counter()
            step(x, y)
            t2 = time.perf_counter()
            rows.append((t0 - last, t1 - t0, t2 - t1, t2 - last))
            last = t2
        before, in_next, call, whole = (
            1e3 * statistics.median(col) for col in zip(*rows[SKIP_STEPS:], strict=True)
        )
        print(
            f"{name}: before next() {before:.2f} ms, next() {in_next:.2f} ms, "
            f"call {call:.2f} ms, step {whole:.2f} ms",
            flush=True,
        )

    probe(make_data(), "warm-up")
    probe(make_data(), "real data")
    probe(tf.data.Dataset.from_tensors(next(iter(make_data()))).repeat(), "one cached batch")


if __name__ == "__main__":
    main()
