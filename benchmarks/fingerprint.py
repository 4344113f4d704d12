"""How long ``tfres.fingerprint()`` takes, in the situations it is called in.

Every run record starts with a fingerprint, so it must be cheap. Each variant runs in a
fresh Python process (no warm caches from a previous variant); the variants are interleaved
(A, B, C, D, A, B, ...) so background load hits them alike, and the table gives medians.

    python benchmarks/fingerprint.py            # 9 rounds
    python benchmarks/fingerprint.py --quick    # 3 rounds

Variants:
- ``default``: ``fingerprint()`` in a plain Python process (what ``tfres run`` pays in its
  own process): TensorFlow is read from its package files, not imported.
- ``tf_imported``: ``fingerprint()`` in a process that already imported TensorFlow (what
  ``tfres.monitor()`` pays inside a training script); the import is not timed.
- ``no_load``: ``fingerprint(processes=False)``: without the 0.2 s background-load window.
- ``tfres_env``: ``fingerprint(import_tensorflow=True)`` cold, TensorFlow import included
  (what ``tfres env`` and ``tfres doctor`` pay).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

VARIANTS = {
    "default": ("", "fingerprint()"),
    "tf_imported": ("import tensorflow", "fingerprint()"),
    "no_load": ("", "fingerprint(processes=False)"),
    "tfres_env": ("", "fingerprint(import_tensorflow=True)"),
}

SCRIPT = """
import json, time
{setup}
from tfres.machine.fingerprint import fingerprint
t0 = time.perf_counter()
fp = {call}
print(json.dumps({{"seconds": time.perf_counter() - t0, "took": fp.took_seconds}}))
"""


def run_once(name: str) -> float:
    setup, call = VARIANTS[name]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(setup=setup, call=call)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["seconds"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 9")
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args()
    rounds = args.rounds or (3 if args.quick else 9)
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for i in range(rounds):
        for name in VARIANTS:
            times[name].append(run_once(name))
        print(f"round {i + 1}/{rounds} done", file=sys.stderr)
    base = statistics.median(times["default"])
    print(f"fingerprint() timing, {rounds} rounds, {os.cpu_count()} CPUs\n")
    print("| variant | median s | min s | max s | vs default |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"| {name} | {med:.3f} | {min(values):.3f} | {max(values):.3f} | {med / base:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
