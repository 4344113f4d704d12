"""What ``tfres run``'s hook costs a custom loop per call of its ``tf.function``.

    python benchmarks/loop_call_cost.py                       # 5 rounds, 3 step sizes
    python benchmarks/loop_call_cost.py --baseline e79b78e    # and that revision's hook
    python benchmarks/loop_call_cost.py --rounds 7 --json out.json

The hook wraps ``tf.function``'s ``__call__``: every call of a custom loop's step is timed,
its CPU read, its gap's bookkeeping kept (and one gap in ten after the profiler window
sampled). That work is the same whatever the step costs, so it weighs most on short steps.

A user's program (written to a temporary folder, no tfres import) runs a custom loop fed by
a Python generator that makes each small batch with NumPy, over a step of one of three
sizes (``--sizes``): ``tiny`` (an 8x8 matmul, a fraction of a millisecond), ``small`` (a
dense layer of 256 on 64 rows with its gradient) and ``medium`` (two of 1024). It times its
own steps from step 300 on, past the profiler window (steps 5-24) and the window's
unprofiled steps after it: the steady state, what every later step pays.

Arms: the program under ``tfres run --no-instrument`` (``plain``), under ``tfres run`` with
this checkout's hook (``this``), and with ``--baseline``'s (``baseline``), each tree's
``.pyc`` files compiled first (an installed tfres has them). Each round starts
every arm at once, each in its own session, pinned to the same core, so that whatever speed
the core has at a moment every arm has it (``accuracy/cost_shared.py`` says why); the first
started rotates. Prints each arm's median step and its median ratio to ``plain`` over the
rounds, and the extra time a call, in microseconds of the shared core: with three arms on
one core, each has about a third of it, so a microsecond of the hook's CPU reads as about
three here. Quote the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from trees import baseline_src, compiled

ROOT = Path(__file__).resolve().parents[1]

PROGRAM = textwrap.dedent(
    '''
    """A custom loop fed by a Python generator: batches made with NumPy, one step each."""
    import json, os, sys, time
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    size, steps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    rows, width = {"tiny": (8, 8), "small": (64, 256), "medium": (64, 1024)}[size]
    layers = 1 if size != "medium" else 2
    weights = [tf.Variable(tf.random.normal((width, width), stddev=0.01)) for _ in range(layers)]

    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            h = x
            for w in weights:
                h = tf.nn.relu(tf.matmul(h, w))
            loss = tf.reduce_mean(h * h)
        for w, g in zip(weights, tape.gradient(loss, weights)):
            w.assign_sub(0.01 * g)
        return loss

    def batches(n):
        rng = np.random.default_rng(0)
        for _ in range(n):
            yield rng.standard_normal((rows, width)).astype(np.float32)

    FROM = 300  # past the profiler window (steps 5-24) and the unprofiled steps after it
    stamps = []
    for i, x in enumerate(batches(steps)):
        float(train_step(x))
        if i >= FROM:
            stamps.append(time.perf_counter())
    with open(out, "w") as fh:
        json.dump({"step_seconds": (stamps[-1] - stamps[0]) / (len(stamps) - 1)}, fh)
    '''
)

#: steps per run, by size: runs of a few seconds each with three arms on one core
STEPS = {"tiny": 6000, "small": 4000, "medium": 1500}


def _start(arm: str, src: Path | None, size: str, work: Path, n: int, core: int) -> Any:
    out = work / f"{size}-{arm}-{n}.json"
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    env.pop("PYTHONPATH", None)
    options = ["--no-instrument"] if arm == "plain" else []
    if src is not None:
        env["PYTHONPATH"] = str(src)
    program = [sys.executable, str(work / "program.py"), size, str(STEPS[size]), str(out)]
    cmd = [sys.executable, "-m", "tfres", "run", "--no-store", *options, "--", *program]
    proc = subprocess.Popen(
        ["taskset", "-c", str(core), *cmd],
        env=env,
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own autogroup: the core is shared per process
    )
    return proc, out


def measure(size: str, arms: dict[str, Path | None], rounds: int, work: Path) -> dict:
    core = max(os.sched_getaffinity(0))
    names = list(arms)
    steps: dict[str, list[float]] = {name: [] for name in names}
    for n in range(rounds):
        order = names[n % len(names) :] + names[: n % len(names)]
        started = {name: _start(name, arms[name], size, work, n, core) for name in order}
        for name, (proc, out) in started.items():
            _, err = proc.communicate()
            if proc.returncode != 0:
                raise SystemExit(f"loop_call_cost.py: {size} ({name}) failed: {err[-600:]!r}")
            steps[name].append(json.loads(out.read_text())["step_seconds"])
        line = ", ".join(f"{k} {1e3 * v[-1]:.3f} ms" for k, v in steps.items())
        print(f"{size} round {n + 1}/{rounds}: {line}", file=sys.stderr, flush=True)
    plain = steps["plain"]
    result: dict[str, Any] = {"steps_ms": {k: [1e3 * s for s in v] for k, v in steps.items()}}
    for name in names:
        ratios = [s / p for s, p in zip(steps[name], plain, strict=True)]
        extra = [1e6 * (s - p) for s, p in zip(steps[name], plain, strict=True)]
        result[name] = {
            "step_ms": 1e3 * statistics.median(steps[name]),
            "ratio_to_plain": statistics.median(ratios),
            "extra_us_a_call": statistics.median(extra),
        }
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", help="also measure this revision's hook (e.g. e79b78e)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per size (default 5)")
    parser.add_argument(
        "--sizes", default="tiny,small,medium", help="comma-separated: tiny, small, medium"
    )
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()
    sizes = args.sizes.split(",")
    unknown = [s for s in sizes if s not in STEPS]
    if unknown:
        given = ", ".join(unknown)
        parser.error(f"--sizes {args.sizes}: {given} unknown; give tiny, small or medium")
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: give 1 or more")
    work = Path(tempfile.mkdtemp(prefix="tfres_loopcall_"))
    (work / "program.py").write_text(PROGRAM)
    arms: dict[str, Path | None] = {"plain": None, "this": ROOT / "src"}
    if args.baseline:
        arms["baseline"] = baseline_src(args.baseline, work / "baseline", "loop_call_cost.py")
    for src in arms.values():
        if src is not None:
            compiled(src)
    started = time.monotonic()
    results = {size: measure(size, arms, args.rounds, work) for size in sizes}
    print(
        f"| step, {args.rounds} rounds, {len(arms)} arms on one core | arm | step ms (median) |"
        " step / plain (median of rounds) | extra us a call (shared core) |"
    )
    print("|---|---|---|---|---|")
    for size, result in results.items():
        for name in arms:
            row = result[name]
            print(
                f"| {size} | {name} | {row['step_ms']:.3f} | {row['ratio_to_plain']:.3f} |"
                f" {row['extra_us_a_call']:+.1f} |"
            )
    print(f"({time.monotonic() - started:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
