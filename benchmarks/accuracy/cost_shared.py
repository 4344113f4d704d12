"""The instrumentation's cost, with both arms sharing one core at the same moments.

``run.py --ab`` runs ``tfres run`` and ``tfres run --no-instrument`` one after the other.
On a VM whose cores each change speed by up to 40% over seconds (measured on the Zen 4 VM
used here: one core at 1.6 ms and the other at 2.2 ms for the same work, at the same time),
a pair whose arms land at different speeds reads a cost of -95% or +45%, and no number of
pairs resolves 2%.

Here the two arms of each pair start together and run at the same time, pinned to the same
core, each in its own session so that the kernel's autogroup (or, failing that, nothing: see
``fairness`` in the JSON) shares the core evenly between the two *processes*, not their
threads. Whatever speed the core has at a given moment, both trainings have it. The next
pair starts when both have ended; the arm started first alternates. With two cores, two
scripts are measured at once, one per core.

What it measures is the cost when the instrumentation's threads cannot hide on an idle core
(each arm has half of one core): its CPU comes out of the training's own share. Where a
core is idle its threads can run there instead, so this is the harder case. It reports:

- the paired cost: 1 - the median of the pairs' ratios (instrumented / plain steps/s),
  with a 90% bootstrap interval; and ``cost``, 1 - median(instrumented) /
  median(plain), which pairs nothing;
- ``extra_cpu_seconds``: the CPU (user + system) of the whole ``tfres run`` process tree,
  instrumented minus plain, the median over the pairs: what the hook, the profiler window
  and the step timed alone at exit cost in all, start-up and exit included.

    .venv/bin/python benchmarks/accuracy/cost_shared.py --set unseen8 --pairs 5 --json c.json
    .venv/bin/python benchmarks/accuracy/cost_shared.py --pool c.json more.json  # pairs pooled
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import AB_SCRIPTS, HERE, figures_of, script_env, set_names  # noqa: E402

ARMS = {"instrumented": [], "plain": ["--no-instrument"]}


@dataclass
class Arm:
    """One arm of the A/B: its runs of the script, each one's figures and CPU kept."""

    name: str
    options: list[str]
    script: Path
    tmp: Path
    runs: list[dict] = field(default_factory=list)
    proc: subprocess.Popen | None = None
    started: float = 0.0
    out: Path | None = None

    def start(self) -> None:
        stem = f"{self.script.stem}-{self.name}-{time.monotonic_ns()}"
        self.out = self.tmp / f"{stem}.jsonl"
        cmd = [sys.executable, "-m", "tfres", "run", "--no-store", "--out", str(self.tmp / stem)]
        cmd += [*self.options, "--", sys.executable, str(self.script)]
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            cmd,
            env=script_env(self.out),
            cwd=self.tmp,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own autogroup: the core is shared per process
        )

    def reap(self) -> bool:
        """True once the run has ended (and is kept); raises on a failed run."""
        assert self.proc is not None and self.out is not None
        if self.proc.returncode is not None:
            return True
        pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
        if pid == 0:
            return False
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        if self.proc.returncode != 0:
            err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
            raise RuntimeError(f"{self.script.name} ({self.name}) failed: {err[-800:]}")
        if self.proc.stderr:
            self.proc.stderr.close()
        figures = figures_of(self.out)
        if figures.get("steps_per_second") is None:
            raise RuntimeError(
                f"{self.script.name} reported no steps_per_second: name a script that times"
                " its own training (the set's AB_SCRIPTS in run.py)"
            )
        self.runs.append(
            {
                "steps_per_second": figures.get("steps_per_second"),
                "wall_seconds": time.monotonic() - self.started,
                # the tfres run process and every process it waited for (the script)
                "cpu_seconds": usage.ru_utime + usage.ru_stime,
            }
        )
        return True

    def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()


def pair_ratios(row: dict) -> list[float]:
    """Each pair's instrumented / plain steps/s, from a row of :func:`measure`."""
    rates = row["rates"]
    return [x / y for x, y in zip(rates["instrumented"], rates["plain"], strict=True)]


def paired_cost(ratios: list[float]) -> tuple[float, float, float]:
    """1 - the median of the pairs' ratios (instrumented / plain), with a 90% bootstrap
    interval (5000 resamples, seeded: the same pairs give the same interval)."""
    rng = random.Random(0)
    costs = sorted(1 - statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(5000))
    return 1 - statistics.median(ratios), costs[250], costs[4749]


def fairness() -> str:
    """How the core is shared between the two arms' processes."""
    try:
        enabled = Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        enabled = False
    return "autogroup (per process)" if enabled else "none (per thread: threads compete alone)"


def measure(script: Path, pairs: int, core: int, tmp: Path) -> dict:
    # per thread on Linux: the arms this thread starts (and their children) inherit the core
    os.sched_setaffinity(0, {core})
    arms = [Arm(name, options, script, tmp) for name, options in ARMS.items()]
    try:
        for i in range(pairs):
            # started together, so their start-ups, trainings and exits overlap: whatever
            # the core's speed at a moment, both trainings have it; the first to start
            # alternates
            for arm in arms if i % 2 == 0 else arms[::-1]:
                arm.start()
            while not all([arm.reap() for arm in arms]):  # each reaped as it ends
                time.sleep(0.05)
    finally:
        for arm in arms:
            arm.stop()
    a, b = ([r["steps_per_second"] for r in arm.runs] for arm in arms)
    cpu_a, cpu_b = ([r["cpu_seconds"] for r in arm.runs] for arm in arms)
    wall_a, wall_b = ([r["wall_seconds"] for r in arm.runs] for arm in arms)
    return {
        "script": script.stem,
        "core": core,
        "pairs": pairs,
        "rates": {"instrumented": a, "plain": b},
        "cpu_seconds": {"instrumented": cpu_a, "plain": cpu_b},
        "wall_seconds": {"instrumented": wall_a, "plain": wall_b},
        "cost": 1 - statistics.median(a) / statistics.median(b),
        "extra_cpu_seconds": statistics.median(x - y for x, y in zip(cpu_a, cpu_b, strict=True)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sets = sorted(AB_SCRIPTS)
    parser.add_argument("--set", type=set_names(sets), default="scripts")
    parser.add_argument("--scripts", default=None, help="comma-separated (default: the set's)")
    parser.add_argument("--pairs", type=int, default=5, help="A/B pairs per script (default 5)")
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--pool",
        nargs="+",
        metavar="JSON",
        help="run nothing: each script's pairs pooled over these earlier --json files",
    )
    args = parser.parse_args()
    if args.pool:
        rows = []
        for path in args.pool:
            try:
                rows += json.loads(Path(path).read_text())["costs"]
            except (OSError, ValueError, KeyError, TypeError) as err:
                parser.error(f"--pool {path}: not the --json of an earlier run ({err})")
        return _pool(rows)
    if args.pairs < 1:
        parser.error(f"--pairs {args.pairs}: give 1 or more")
    names = args.scripts.split(",") if args.scripts else AB_SCRIPTS[args.set]
    paths = [HERE / args.set / f"{name}.py" for name in names]
    for path in paths:
        if not path.exists():
            parser.error(f"{path} does not exist: name a script of --set {args.set}")
    cores = sorted(os.sched_getaffinity(0))
    results: dict = {"fairness": fairness(), "costs": []}
    print(f"sharing: {results['fairness']}; one script per core at a time on {cores}", flush=True)
    todo: queue.SimpleQueue[Path] = queue.SimpleQueue()
    for path in paths:
        todo.put(path)
    with tempfile.TemporaryDirectory(prefix="tfres-cost-") as tmp:

        def worker(core: int) -> None:
            while not stopped.is_set():
                try:
                    path = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    row = measure(path, args.pairs, core, Path(tmp))
                except BaseException:
                    stopped.set()  # the other core takes no new script
                    raise
                with lock:
                    results["costs"].append(row)
                    _print(row)
                    if args.json:  # kept as each script ends: a later failure loses nothing
                        _write_atomically(Path(args.json), json.dumps(results, indent=1))

        lock, stopped = threading.Lock(), threading.Event()
        with ThreadPoolExecutor(len(cores)) as pool:
            futures = [pool.submit(worker, core) for core in cores]
        failed = [f.exception() for f in futures if f.exception() is not None]
    if failed:
        if os.environ.get("TFRES_DEBUG") == "1":
            raise failed[0]
        print(f"cost_shared.py: {failed[0]}", file=sys.stderr)
        return 1
    return 0


def _write_atomically(path: Path, text: str) -> None:
    part = path.with_name(path.name + ".part")
    part.write_text(text)
    os.replace(part, path)


def _print(row: dict) -> None:
    rates = {k: [round(x, 1) for x in v] for k, v in row["rates"].items()}
    cost, low, high = paired_cost(pair_ratios(row))
    print(
        f"{row['script']}: paired cost {100 * cost:+.1f}% (90% interval {100 * low:+.1f}% to"
        f" {100 * high:+.1f}%; of the medians {100 * row['cost']:+.1f}%), extra CPU"
        f" {row['extra_cpu_seconds']:+.2f} s per run, core {row['core']}: {rates}",
        flush=True,
    )


def _pool(rows: list[dict]) -> int:
    pooled: dict[str, list[float]] = {}
    for row in rows:
        pooled.setdefault(row["script"], []).extend(pair_ratios(row))
    for name, ratios in pooled.items():
        cost, low, high = paired_cost(ratios)
        print(
            f"{name}: {len(ratios)} pairs, paired cost {100 * cost:+.1f}%"
            f" (90% interval {100 * low:+.1f}% to {100 * high:+.1f}%)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
