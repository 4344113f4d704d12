"""Does a script's truth depend on how long its ``fit`` is? The steady-state step of one
accuracy script, timed the way ``truth.measure`` times it (full step against the step on
one cached batch, from step ``SKIP_STEPS`` to the end of each ``fit``), in ``fit`` calls of
each given length, in one process, pairs interleaved, medians.

The script runs as written up to its last ``timed_fit``/``measure`` lines, which are left
out (they train and time; here the lengths do). It must define ``model`` and a
``keras.utils.PyDataset`` class or data function named by ``--data``. No tfres here.

    .venv/bin/python benchmarks/accuracy/fit_length.py \\
        benchmarks/accuracy/unseen3/input_pydataset_threads_fingerprints.py \\
        --data Molecules --lengths 30,400 --pairs 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _lengths(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) <= 5:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give comma-separated step counts above 5 (SKIP_STEPS), e.g. 30,400"
        )
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", type=Path)
    parser.add_argument("--data", required=True, help="the script's PyDataset or data function")
    parser.add_argument("--lengths", type=_lengths, default=[30, 400])
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error(f"--pairs {args.pairs}: give 1 or more")
    if not args.script.is_file():
        parser.error(f"{args.script}: no such script")
    lines = args.script.read_text().splitlines()
    kept = [ln for ln in lines if not ln.startswith(("timed_fit(", "measure("))]
    sys.path.insert(0, str(HERE))
    scope: dict = {"__name__": "__fit_length__", "__file__": str(args.script)}
    exec(compile("\n".join(kept), str(args.script), "exec"), scope)  # noqa: S102
    if args.data not in scope or "model" not in scope:
        parser.error(f"{args.script} defines no 'model' or no {args.data!r}")

    import tensorflow as tf
    from truth import SKIP_STEPS, _timed_steps

    model, make_data = scope["model"], scope[args.data]
    batch = next(iter(make_data()))
    cached = tf.data.Dataset.from_tensors(tuple(batch)).repeat()
    for steps in args.lengths:
        full, compute = [], []
        for _ in range(args.pairs):
            full.append(_timed_steps(model, make_data(), steps, SKIP_STEPS)[1])
            compute.append(_timed_steps(model, cached, steps, SKIP_STEPS)[1])
        f, c = statistics.median(full), statistics.median(compute)
        print(
            f"fit of {steps} steps: full {f * 1e3:.1f} ms, cached {c * 1e3:.1f} ms, "
            f"input wait {(f - c) / f:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
