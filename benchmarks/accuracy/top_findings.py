"""Top finding only, no truth: each script of the given causes, in the given sets, run once
under ``tfres run`` (a regression check for the rules, quicker than ``run.py``).

    .venv/bin/python benchmarks/accuracy/top_findings.py "start-up,evaluation,checkpoint saves" \\
        unseen7,unseen6,unseen5,unseen4,unseen3,unseen2,unseen,heldout,scripts,tuning,fresh
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import run as suite


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("causes", help="comma-separated, as in run.py's EXPECTED")
    parser.add_argument("sets", help="comma-separated folders of benchmarks/accuracy/")
    args = parser.parse_args()
    from tfres.record import load

    missing = [n for n in args.sets.split(",") if not (suite.HERE / n).is_dir()]
    if missing:
        parser.error(f"no set {missing[0]!r} in {suite.HERE}: name its folders, e.g. unseen7")
    causes, right, total = set(args.causes.split(",")), 0, 0
    with tempfile.TemporaryDirectory(prefix="tfres-tops-") as tmp:
        for name in args.sets.split(","):
            for script in sorted((suite.HERE / name).glob("*.py")):
                cause, accepted, options = suite.EXPECTED.get(script.stem, ("", (), ()))
                if cause not in causes:
                    continue
                _, path = suite.run_script(script, tfres=list(options), tmp=Path(tmp))
                assert path is not None
                findings = load(path).findings
                top = findings[0] if findings else {}
                ok = bool(top) and suite.matches(top, accepted)
                advice = [f["rule"] for f in findings if f.get("rule") in suite.TRAINING_RULES]
                right, total = right + ok, total + 1
                print(
                    f"{name}/{script.stem}: {'OK ' if ok else 'BAD'} {cause}: {top.get('rule')} "
                    f"{top.get('severity')} {top.get('title')}"
                    + (f" advice={advice}" if cause == "start-up" else ""),
                    flush=True,
                )
    print(f"top finding names the cause: {right}/{total}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
