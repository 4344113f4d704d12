"""Two readings of the same profiler traces: the trace reader before and after a change.

For each script: its truth outside tfres (``SCRIPT --truth``, as ``run.py`` does), then one
``tfres run --profile A:B`` that keeps its trace; that trace is read by the current
``_tfres_xplane`` and by the one at ``--before`` (a copy of the file from an older commit).
Same trace, two readers: the difference is the reader's alone. The scripts never import
tfres. Example, on the tuning set:

    git show HEAD~1:src/tfres/devices/inject/_tfres_xplane.py > /tmp/before_xplane.py
    .venv/bin/python benchmarks/accuracy/tuning/experiments/gil_input/compare.py \
        --before /tmp/before_xplane.py --set scripts --only input_slow_generator,input_pydataset
"""

import argparse
import importlib.util
import statistics
import sys
import tempfile
from pathlib import Path

ACCURACY = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ACCURACY))

import run as harness  # noqa: E402  (benchmarks/accuracy/run.py)

from tfres.devices.inject import _tfres_xplane as after  # noqa: E402


def _load(path):
    spec = importlib.util.spec_from_file_location("_before_xplane", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _share(reader, trace):
    summary = reader.summary(reader.step_breakdown(trace))
    return summary["input_seconds"] / summary["duration_seconds"] if summary["steps"] else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="an older _tfres_xplane.py")
    parser.add_argument("--set", default="scripts", choices=("scripts", "tuning", "heldout"))
    parser.add_argument("--only", required=True, help="comma-separated script names")
    parser.add_argument("--window", default="5:24")
    args = parser.parse_args()
    if not Path(args.before).is_file():
        parser.error(f"--before {args.before}: no such file; write one with git show")
    names = args.only.split(",")
    missing = [n for n in names if not (ACCURACY / args.set / f"{n}.py").is_file()]
    if missing:
        parser.error(f"--only: no {', '.join(missing)} in benchmarks/accuracy/{args.set}/")
    before = _load(args.before)
    tmp = Path(tempfile.mkdtemp(prefix="gil-input-"))
    errors = {"before": [], "after": []}
    for name in names:
        script = ACCURACY / args.set / f"{name}.py"
        truth = harness.run_script(script, tfres=None, tmp=tmp)[0].get("truth_input_wait_fraction")
        if truth is None:  # a script whose cause is not the step (start-up, saves, ...)
            print(f"{name:32s} no input-wait truth", flush=True)
            continue
        logdir = tmp / f"profile-{name}"
        harness.run_script(
            script, tfres=["--profile", args.window, "--profile-dir", str(logdir)], tmp=tmp
        )
        trace = after.latest_xplane(str(logdir))
        if trace is None:  # e.g. a custom loop: no Keras step markers, its wait timed otherwise
            print(f"{name:32s} truth {truth:6.1%}  no profiler trace", flush=True)
            continue
        old, new = _share(before, trace), _share(after, trace)
        errors["before"].append(abs(old - truth))
        errors["after"].append(abs(new - truth))
        print(
            f"{name:32s} truth {truth:6.1%}  before {old:6.1%} ({100 * (old - truth):+5.1f})"
            f"  after {new:6.1%} ({100 * (new - truth):+5.1f})",
            flush=True,
        )
    for which, errs in errors.items():
        print(f"{which}: median |error| {100 * statistics.median(errs):.1f} points")


if __name__ == "__main__":
    main()
