"""Offline: would reading the steps after the profiler window help where they ran slower?

For each input script of ``run.py --json`` files (which keep every step of each run), it
sets the record's reading (the window's input share, ``window``) beside a ``gated`` one:
where the unprofiled steps after step 5 took on average more than ``--drift`` times the
window's median step, every step's time above the window's median non-input time counts
as input, over all the steps; elsewhere the window's reading stands. It prints each script
and how many readings land within 5 and 10 points of their truths either way.

    .venv/bin/python benchmarks/accuracy/drift_estimate.py unseen18.json unseen19.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from typing import Any

SKIP = 5  # the truths skip each run's first five steps too


def unprofiled(step: dict[str, Any]) -> float:
    duration = float(step["duration_seconds"])
    return duration - min(float(step.get("profiler_seconds", 0.0)), duration)


def readings(check: dict[str, Any], drift_limit: float) -> tuple[float, float, float | None]:
    steps = [s for s in check.get("steps") or [] if s.get("kind") in ("fit", "loop")]
    window = [s for s in steps if s.get("input_wait_seconds") is not None]
    waits = [min(float(s["input_wait_seconds"]), unprofiled(s)) for s in window]
    read = sum(waits) / sum(unprofiled(s) for s in window)
    rest = [s for s in steps if s.get("input_wait_seconds") is None and s.get("step", 0) >= SKIP]
    if len(rest) < 5:
        return read, read, None
    other = statistics.median(unprofiled(s) - w for s, w in zip(window, waits, strict=True))
    drift = statistics.mean(unprofiled(s) for s in rest) / statistics.median(
        unprofiled(s) for s in window
    )
    mean = statistics.mean(unprofiled(s) for s in steps if s.get("step", 0) >= SKIP)
    gated = max(0.0, (mean - other) / mean) if drift > drift_limit else read
    return read, gated, drift


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="run.py --json outputs")
    parser.add_argument("--drift", type=float, default=1.25, help="the gate (default 1.25)")
    args = parser.parse_args()
    rows = []
    for path in args.files:
        with open(path) as fh:
            checks = json.load(fh)["checks"]
        for check in checks:
            truth = check.get("input_wait_truth")
            if check.get("cause") != "input" or truth is None or not check.get("steps"):
                continue
            if not any(s.get("input_wait_seconds") is not None for s in check["steps"]):
                continue
            read, gated, drift = readings(check, args.drift)
            rows.append((truth, read, gated))
            shown = "-" if drift is None else f"{drift:.2f}"
            print(
                f"{check['script'][:40]:40s} truth {100 * truth:5.1f} window {100 * read:5.1f}"
                f" gated {100 * gated:5.1f} drift {shown}"
            )
    for i, name in ((1, "window"), (2, "gated")):
        errors = [100 * abs(row[i] - row[0]) for row in rows]
        print(
            f"{name}: within 5 points {sum(e <= 5 for e in errors)}/{len(errors)},"
            f" within 10 {sum(e <= 10 for e in errors)}/{len(errors)},"
            f" mean error {statistics.mean(errors):.1f}"
        )


if __name__ == "__main__":
    main()
