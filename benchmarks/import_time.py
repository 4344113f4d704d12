"""What ``import tensorflow`` costs in two or more Python environments, side by side.

    python benchmarks/import_time.py --python OLD/.venv/bin/python --python NEW/.venv/bin/python
    python benchmarks/import_time.py --python A --python B --rounds 9 --json out.json

Most of the test suite's time is TensorFlow processes (a ``tfres run`` of a small Keras script
is the script's own import and a few seconds of work), and what ``import tensorflow`` costs
depends on what else the environment holds: Keras imports scikit-learn, pandas and
matplotlib whenever they are installed, and ml_dtypes registers its NumPy loops at import.

Each round starts a new process of every interpreter, in a rotated order, which times its
own ``import tensorflow`` (wall and CPU) and says which of the packages above it pulled in.
Then one more process each, under ``-X importtime``, gives those packages' share (their
cumulative import time, on the line of their import). Prints a markdown table: medians, and each
interpreter's median against the first's (quote the ratios, not the times: the machines here
are noisy).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

#: packages whose presence changes what ``import tensorflow`` costs
WATCHED = ("ml_dtypes", "sklearn", "scipy", "pandas", "pyarrow", "matplotlib.pyplot")
#: their distribution names, for the versions installed
DISTRIBUTIONS = ("tensorflow-cpu", "tensorflow", "keras", "numpy", "ml_dtypes", "scikit-learn")

CHILD = """
import json, sys, time
wall, cpu = time.perf_counter(), time.process_time()
import tensorflow
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
from importlib import metadata
def version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
print(json.dumps({
    "wall_seconds": wall,
    "cpu_seconds": cpu,
    "imported": [m for m in WATCHED if m in sys.modules],
    "versions": {d: version(d) for d in DISTRIBUTIONS if version(d)},
}))
""".replace("WATCHED", repr(WATCHED)).replace("DISTRIBUTIONS", repr(DISTRIBUTIONS))


class BenchError(Exception):
    """A bad argument or a child that failed: one line, exit 1."""


def _python(python: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
    )


def once(python: str) -> dict[str, Any]:
    done = _python(python, "-c", CHILD)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise BenchError(f"{python}: import tensorflow failed: {last}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def import_shares(python: str) -> dict[str, float]:
    """Each watched package's cumulative import time, seconds, from one ``-X importtime``
    run: the line of its one import (0.0 where it never was)."""
    done = _python(python, "-X", "importtime", "-c", "import tensorflow")
    shares = dict.fromkeys(WATCHED, 0.0)
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or not line.startswith("import time:"):
            continue
        name = parts[2].strip()
        if name in shares and parts[1].strip().isdigit():
            shares[name] = int(parts[1]) / 1e6
    return shares


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", required=True, help="an interpreter")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    try:
        for python in args.python:
            if not Path(python).is_file():
                raise BenchError(f"--python {python}: no such interpreter")
        if args.rounds < 1:
            raise BenchError(f"--rounds {args.rounds}: give 1 or more")
        return run(args)
    except BenchError as err:
        print(f"import_time.py: {err}", file=sys.stderr)
        return 1


def run(args: argparse.Namespace) -> int:
    pythons: list[str] = args.python
    runs: dict[str, list[dict[str, Any]]] = {p: [] for p in pythons}
    for r in range(args.rounds):
        order = pythons[r % len(pythons) :] + pythons[: r % len(pythons)]
        for python in order:
            runs[python].append(once(python))
        print(f"round {r + 1}/{args.rounds}", file=sys.stderr)
    shares = {p: import_shares(p) for p in pythons}

    first = statistics.median(x["wall_seconds"] for x in runs[pythons[0]])
    rows = []
    for python in pythons:
        wall = statistics.median(x["wall_seconds"] for x in runs[python])
        cpu = statistics.median(x["cpu_seconds"] for x in runs[python])
        last = runs[python][-1]
        rows.append(
            {
                "python": python,
                "wall_seconds_median": wall,
                "cpu_seconds_median": cpu,
                "ratio_to_first": wall / first,
                "walls_seconds": [x["wall_seconds"] for x in runs[python]],
                "imported": last["imported"],
                "versions": last["versions"],
                "import_seconds": shares[python],
            }
        )

    print(
        "| interpreter | versions | import tensorflow, median s (CPU s) | vs first | "
        + " | ".join(WATCHED)
        + " |"
    )
    print("|---|---|---|---|" + "---|" * len(WATCHED))
    for row in rows:
        versions = ", ".join(f"{k} {v}" for k, v in row["versions"].items())
        cells = [
            f"{row['import_seconds'][m]:.2f}" if m in row["imported"] else "not imported"
            for m in WATCHED
        ]
        print(
            f"| `{row['python']}` | {versions} | {row['wall_seconds_median']:.2f} "
            f"({row['cpu_seconds_median']:.2f}) | {row['ratio_to_first']:.3f} | "
            + " | ".join(cells)
            + " |"
        )
    if args.json:
        args.json.write_text(json.dumps({"rounds": args.rounds, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
