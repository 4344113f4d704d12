"""What the hook's reads and writes between two steps cost a program whose input runs Python.

    python benchmarks/hook_gil.py --baseline 9842899           # 5 rounds
    python benchmarks/hook_gil.py --baseline 9842899 --rounds 3 --json out.json

``tfres run``'s hook writes each step's line and reads ``/proc`` between two steps. ``os``'s
calls let the GIL go; where the program's input pipeline runs Python on another thread, that
thread takes it, and the step's thread waits for it again, up to the switch interval (5 ms).
The hook now makes those calls keeping the GIL (``_tfres_held``). Measured side by side:

a. in this process, beside a thread running a Python loop: a ``/proc/self/io`` read through
   ``os.pread`` and through ``_tfres_held.pread``; a step's JSON line appended with a file
   object's ``write`` and ``flush`` (the hook until now) and with ``_tfres_held.write``;
   interleaved, 200 calls each, medians;
b. a user's program (written to a temporary folder, no tfres import: a Keras ``fit`` fed by
   a ``numpy_function`` map that parses text records in Python) run plain, under ``tfres
   run`` with the ``--baseline`` revision's ``src/`` and under ``tfres run`` with this
   checkout's, in turn, each round in a rotated order. Each run times its own steps (mean of
   the gaps between ``on_train_batch_end`` calls, past the first 5 of each epoch); a
   ``tfres run`` record also gives the profiler window's steps as the hook timed them and as
   their trace markers span them (the share of the hook's step time the trace reads).

Prints a markdown table; quote the ratios, not the times (the machines here are noisy).
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
import threading
import time
from pathlib import Path
from typing import Any

from trees import baseline_src, compiled

ROOT = Path(__file__).resolve().parents[1]
INJECT = ROOT / "src" / "tfres" / "devices" / "inject"

PROGRAM = textwrap.dedent(
    '''
    """A fit fed by a numpy_function map that parses text records in Python."""
    import json, os, sys, time
    import numpy as np
    import tensorflow as tf
    import keras

    rng = np.random.default_rng(7)
    LINES = [",".join("%.4f" % v for v in rng.normal(size=48)) for _ in range(512)]

    def parse(i):
        out = np.empty((256, 48), np.float32)
        for k in range(256):
            fields = LINES[(int(i) * 256 + k) % len(LINES)].split(",")
            out[k] = [float(f) * 0.5 + 0.1 for f in fields]
        return out, out[:, :1].copy()

    def batch(i):
        x, y = tf.numpy_function(parse, [i], (tf.float32, tf.float32))
        return tf.ensure_shape(x, (256, 48)), tf.ensure_shape(y, (256, 1))

    data = tf.data.Dataset.range(10**6).map(batch).prefetch(2)
    model = keras.Sequential([keras.Input((48,)), keras.layers.Dense(128, activation="relu"),
                              keras.layers.Dense(128, activation="relu"), keras.layers.Dense(1)])
    model.compile("adam", "mse")

    class StepTimer(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.gaps, self.last, self.n = [], None, 0
        def on_epoch_begin(self, epoch, logs=None):
            self.last, self.n = None, 0
        def on_train_batch_end(self, batch, logs=None):
            now = time.perf_counter()
            if self.last is not None and self.n > 5:
                self.gaps.append(now - self.last)
            self.last, self.n = now, self.n + 1

    timer = StepTimer()
    model.fit(data, epochs=3, steps_per_epoch=60, verbose=0, callbacks=[timer])
    with open(sys.argv[1], "w") as fh:
        json.dump({"step_seconds": sum(timer.gaps) / len(timer.gaps)}, fh)
    '''
)


def _busy() -> tuple[threading.Event, threading.Thread]:
    stop = threading.Event()

    def spin() -> None:
        x = 0
        while not stop.is_set():
            x += 1

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    return stop, thread


def in_process(calls: int = 200) -> dict[str, float]:
    """(a): median milliseconds a call, beside a thread running Python."""
    sys.path.insert(0, str(INJECT))
    import _tfres_held as held

    fd = os.open("/proc/self/io", os.O_RDONLY)
    out = Path(tempfile.mkdtemp(prefix="tfres_gil_"))
    fh = open(out / "file.jsonl", "a")  # noqa: SIM115 (kept open, as the hook kept it)
    wfd = os.open(out / "held.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    line = json.dumps({"kind": "fit", "step": 12, "duration_seconds": 0.021}) + "\n"

    def file_write() -> None:
        fh.write(line)
        fh.flush()

    cases = {
        "read /proc/self/io: os.pread": lambda: os.pread(fd, 512, 0),
        "read /proc/self/io: _tfres_held.pread": lambda: held.pread(fd, 512, 0),
        "append a step's line: write + flush": file_write,
        "append a step's line: _tfres_held.write": lambda: held.write(wfd, line.encode()),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    stop, thread = _busy()
    try:
        for _ in range(calls):
            for name, call in cases.items():
                start = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - start)
    finally:
        stop.set()
        thread.join()
        fh.close()
        os.close(fd)
        os.close(wfd)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def one_run(arm: str, src: Path | None, work: Path, n: int) -> dict[str, Any]:
    out = work / f"{arm}-{n}.json"
    program = [sys.executable, str(work / "program.py"), str(out)]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    if src is None:
        subprocess.run(program, check=True, env=env, capture_output=True)
        return json.loads(out.read_text())
    env["PYTHONPATH"] = str(src)
    record = work / f"{arm}-{n}.record.json"
    subprocess.run(
        [sys.executable, "-m", "tfres", "run", "--no-store", "--out", str(record), "--", *program],
        check=True,
        env=env,
        capture_output=True,
    )
    result = json.loads(out.read_text())
    rec = json.loads(record.read_text())
    profile = (rec.get("extra") or {}).get("profile") or {}
    first, last = profile.get("window") or (None, None)
    hook = [
        s["duration_seconds"]
        for s in rec["steps"]
        if s.get("kind") == "fit" and first is not None and first <= s["step"] <= last
    ]
    marked = (profile.get("summary") or {}).get("duration_seconds")
    if hook and marked:
        result["marked_share"] = marked / sum(hook)
    return result


def end_to_end(baseline: str, rounds: int) -> dict[str, Any]:
    """(b): the program's own step time per arm, median over ``rounds``."""
    work = Path(tempfile.mkdtemp(prefix="tfres_gil_e2e_"))
    (work / "program.py").write_text(PROGRAM)
    base = baseline_src(baseline, work / "baseline", "hook_gil.py")
    for src in (base, ROOT / "src"):
        compiled(src)
    arms: dict[str, Path | None] = {"plain": None, "baseline": base, "this": ROOT / "src"}
    names = list(arms)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for n in range(rounds):
        order = names[n % 3 :] + names[: n % 3]
        for name in order:
            runs[name].append(one_run(name, arms[name], work, n))
            print(f"round {n + 1}/{rounds} {name}: {runs[name][-1]}", file=sys.stderr)
    step = {name: statistics.median(r["step_seconds"] for r in runs[name]) for name in names}
    share = {
        name: statistics.median(r["marked_share"] for r in runs[name] if "marked_share" in r)
        for name in ("baseline", "this")
        if any("marked_share" in r for r in runs[name])
    }
    ratios = {
        name: statistics.median(
            r["step_seconds"] / p["step_seconds"]
            for r, p in zip(runs[name], runs["plain"], strict=True)
        )
        for name in ("baseline", "this")
    }
    return {
        "step_ms": {k: v * 1e3 for k, v in step.items()},
        "ratio_to_plain": ratios,
        "marked_share": share,
        "runs": runs,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", required=True, help="the revision to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()
    calls = in_process()
    e2e = end_to_end(args.baseline, args.rounds)
    print("| (a) in one process, beside a Python thread | median ms a call |")
    print("|---|---|")
    for name, ms in calls.items():
        print(f"| {name} | {ms:.3f} |")
    print()
    print(
        f"| (b) the program, {args.rounds} rounds | step ms (median) | "
        "step time / plain (median of rounds) | trace markers / hook's step |"
    )
    print("|---|---|---|---|")
    for name in ("plain", "baseline", "this"):
        ratio = e2e["ratio_to_plain"].get(name)
        share = e2e["marked_share"].get(name)
        print(
            f"| {name} | {e2e['step_ms'][name]:.2f} | "
            f"{'' if ratio is None else f'{ratio:.3f}'} | "
            f"{'' if share is None else f'{share:.1%}'} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"in_process_ms": calls, **e2e}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
