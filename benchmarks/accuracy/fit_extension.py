"""Offline: a Keras fit's input share read over all its steps (tfres.diagnosis.fit_input)
against its profiler window's alone, on ``run.py --json`` files (which keep every step).

For each script with a truth whose record has measured fit steps, it prints the truth, the
window's share and the fit's; then, per cause, how many readings land within 5 and 10
points of their truths either way, and the scripts whose share crosses the input rule's
20% ("highly input-bound") one way or the other.

    .venv/bin/python benchmarks/accuracy/fit_extension.py /tmp/unseen33.json /tmp/unseen34.json
"""

from __future__ import annotations

import argparse
import json
import statistics

from tfres.diagnosis.fit_input import EXTEND_ABOVE, fit_input


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="run.py --json outputs")
    args = parser.parse_args()
    rows: list[tuple[str, str, float, float, float]] = []
    for path in args.files:
        try:
            with open(path) as fh:
                checks = json.load(fh)["checks"]
        except (OSError, ValueError, KeyError, TypeError) as err:
            parser.error(f"{path!r} is not a run.py --json output ({err}): pass one, e.g. a.json")
        for check in checks:
            truth = check.get("input_wait_truth")
            fit = fit_input(check.get("steps") or [])
            if truth is None or fit is None:
                continue
            rows.append((check["script"], check["cause"], truth, fit.window_fraction, fit.fraction))
            print(
                f"{check['cause'][:10]:10s} {check['script'][:44]:44s} truth {100 * truth:5.1f}"
                f" window {100 * fit.window_fraction:5.1f} fit {100 * fit.fraction:5.1f}"
                f" ({fit.extended_steps} steps extended)"
            )
    for label, keep in (("input scripts", {"input"}), ("all scripts", None)):
        chosen = [r for r in rows if keep is None or r[1] in keep]
        if not chosen:
            continue
        for i, name in ((3, "window"), (4, "fit")):
            errors = [100 * abs(r[i] - r[2]) for r in chosen]
            print(
                f"{label}, {name}: within 5 points {sum(e <= 5 for e in errors)}/{len(errors)},"
                f" within 10 {sum(e <= 10 for e in errors)}/{len(errors)},"
                f" mean error {statistics.mean(errors):.1f}"
            )
    crossed = [r for r in rows if (r[3] >= EXTEND_ABOVE) != (r[4] >= EXTEND_ABOVE)]
    for script, cause, truth, window, whole in crossed:
        print(
            f"crosses {100 * EXTEND_ABOVE:.0f}%: {cause} {script} truth {100 * truth:.1f}"
            f" window {100 * window:.1f} fit {100 * whole:.1f}"
        )


if __name__ == "__main__":
    main()
