"""Another revision's tfres beside this checkout's, for the benchmarks that compare the two
(``hook_gil.py``, ``loop_call_cost.py``): its ``src/`` from ``git archive``, and each tree's
``.pyc`` files compiled as an installed tfres has them (the same hook cost about a point more
from a tree with the ``tfres`` package's ``.pyc`` files than from one without,
docs/benchmarks/instrumentation.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def baseline_src(rev: str, into: Path, script: str) -> Path:
    """``rev``'s ``src/`` in ``into``; exits with one line naming ``rev`` where it is not a
    revision of this checkout (``script``: the benchmark, named in that line)."""
    got = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True)
    if got.returncode != 0:
        raise SystemExit(
            f"{script}: --baseline {rev!r} is not a revision of this checkout "
            "(give a commit, e.g. HEAD~1)"
        )
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=got.stdout, check=True)
    return into / "src"


def compiled(src: Path) -> None:
    """Compile ``src``'s ``tfres`` package to ``.pyc`` files."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(src / "tfres")],
        check=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""},
    )
