"""Does a memory budget hold? A Keras training that grows to 3x its budget, with and without.

    python benchmarks/budget.py            # 10 trials per mode, budget = baseline + 400 MiB
    python benchmarks/budget.py --quick    # 2 trials per mode, baseline + 250 MiB
    python benchmarks/budget.py --growth --trials 5 --before /tmp/tfres-before/src
                                           # peak vs budget on programs that grow fast

``--growth`` runs two programs that are not Keras and do not handle any signal, under
``tfres run --memory-budget``: a list that grows as fast as Python can append 1 MiB bytes
objects (budget 300 MiB), and a leak held out while the budget was tuned (a dict cache of
3 MiB bytearrays in bursts, budget 700 MiB). The peak is the kernel's high-water mark of the
program (``ru_maxrss``, read by a small wrapper that waits for it) plus the wrapper's own
(``VmHWM``), so an upper bound of the tree's peak RSS. ``--before SRC`` also runs another
tfres (a source tree, e.g. ``git archive`` of an older commit), interleaved trial by trial.

The workload (benchmarks/budget_workload.py) trains a small Keras model and holds on to
more memory after every batch (150 MiB/s), until it holds 3x the budget. Three modes, run
interleaved trial by trial:

- ``tfres run --memory-budget B``: the workload handles SIGTERM by saving a checkpoint at
  the next batch end; a trial passes when the record says the budget stopped it, the
  checkpoint loads, and the workload's own peak RSS (``ru_maxrss``, the kernel's high-water
  mark, not tfres's sampling) is within B + 5%;
- ``tfres.callbacks.MemoryBudget(B)`` in-process: passes when ``BudgetExceededError`` came
  with its figures, the checkpoint loads, and the peak RSS is within B + 5%;
- no tfres: the same workload, how far past B it goes.

The budget is the workload's baseline (TensorFlow, Keras and the model, measured first by a
calibration run) plus 400 MiB, so the budget is mostly the part that grows. Prints a
markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

HERE = Path(__file__).resolve().parent
WORKLOAD = HERE / "budget_workload.py"
MiB = 2**20


def run_workload(
    mode: str, workdir: Path, tag: str, *, budget: int, grow_to: int, rate: float
) -> dict:
    report = workdir / f"{tag}.json"
    ckpt = workdir / f"{tag}.keras"
    args = [
        sys.executable,
        str(WORKLOAD),
        "--mode",
        mode,
        "--grow-to-bytes",
        str(grow_to),
        "--budget-bytes",
        str(budget),
        "--rate-mib-per-second",
        str(rate),
        "--checkpoint",
        str(ckpt),
        "--report",
        str(report),
    ]
    record_path = workdir / f"{tag}.record.json"
    if mode == "sigterm":
        args = [
            sys.executable,
            "-m",
            "tfres",
            "run",
            "--no-store",
            "--memory-budget",
            str(budget),
            "--out",
            str(record_path),
            "--",
            *args,
        ]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    t0 = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    out: dict = {"mode": mode, "seconds": time.monotonic() - t0, "exit": proc.returncode}
    if report.exists():
        out.update(json.loads(report.read_text()))
    else:
        out["ended"] = f"no report (exit {proc.returncode}): {proc.stderr.strip()[-300:]}"
    if record_path.exists():
        record = json.loads(record_path.read_text())
        out["end_reason"] = record.get("end_reason")
        out["control"] = record.get("control", {}).get("budget")
    return out


def checkpoint_loads(path: str | None) -> bool:
    if not path or not Path(path).exists():
        return False
    import keras

    try:
        keras.models.load_model(path)
        return True
    except Exception:
        return False


def judge(trial: dict, budget: int) -> bool:
    peak_ok = trial.get("peak_rss_bytes", 1 << 62) <= budget * 1.05
    loads = checkpoint_loads(trial.get("checkpoint"))
    if trial["mode"] == "sigterm":
        reason = "memory budget" in (trial.get("end_reason") or "")
        return peak_ok and loads and reason and trial.get("ended") == "sigterm"
    if trial["mode"] == "callback":
        figures = bool(trial.get("used_bytes")) and "memory budget exceeded" in (
            trial.get("error") or ""
        )
        return peak_ok and loads and figures and trial.get("ended") == "BudgetExceededError"
    return False


def read_costs(repeats: int = 200) -> dict[str, float]:
    """What one reading costs on a TensorFlow process holding ~1 GB: RSS against PSS.

    Measured on this process after importing Keras, training one step and holding 400 MiB.
    """
    import keras
    import numpy as np
    import psutil

    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    model.train_on_batch(np.ones((32, 32), "float32"), np.ones((32, 1), "float32"))
    held = np.ones(400 * MiB // 8)
    proc = psutil.Process()
    out: dict[str, float] = {"rss_bytes": proc.memory_info().rss}
    for name, read in (("rss", proc.memory_info), ("pss", proc.memory_full_info)):
        t0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(repeats):
            read()
        out[f"{name}_wall_ms"] = (time.perf_counter() - t0) / repeats * 1e3
        out[f"{name}_cpu_ms"] = (time.thread_time() - c0) / repeats * 1e3
    out["pss_bytes"] = proc.memory_full_info().pss
    del held
    return out


# -- --growth: programs that grow fast and handle no signal ---------------------------------
FAST_LIST = "x = []\nwhile True:\n    x.append(b'x' * 2**20)\n"
HELD_OUT_LEAK = (
    "import time\n"
    "cache, i = {}, 0\n"
    "while True:\n"
    "    cache[i] = bytearray(b'\\x01') * (3 * 2**20)\n"
    "    i += 1\n"
    "    if i % 10 == 0:\n"
    "        time.sleep(0.01)\n"
)
#: runs argv[2:], ignores SIGTERM/SIGINT itself (the whole group gets them), then writes
#: {"child_peak_bytes", "self_peak_bytes", "returncode"} to argv[1]. Its own peak is VmHWM
#: (since its exec): ru_maxrss would count the image of tfres it was forked from.
PEAK_WRAPPER = (
    "import json, resource, signal, subprocess, sys\n"
    "child = subprocess.Popen(sys.argv[2:])\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "code = child.wait()\n"
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
    "child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024\n"
    "json.dump({'child_peak_bytes': child, 'self_peak_bytes': int(hwm) * 1024,"
    " 'returncode': code}, open(sys.argv[1], 'w'))\n"
    "sys.exit(128 - code if code < 0 else code)\n"
)
GROWTH_CASES = {"fast list": (FAST_LIST, 300 * MiB), "held-out leak": (HELD_OUT_LEAK, 700 * MiB)}


def growth_trial(program: str, budget: int, workdir: Path, tag: str, src: str | None) -> dict:
    peaks, record_path = workdir / f"{tag}.peaks.json", workdir / f"{tag}.record.json"
    env = {**os.environ}
    if src:
        env["PYTHONPATH"] = src
    args = [sys.executable, "-m", "tfres", "run", "--no-store", "--memory-budget", str(budget)]
    args += ["--out", str(record_path), "--"]
    args += [sys.executable, "-c", PEAK_WRAPPER, str(peaks), sys.executable, "-c", program]
    t0 = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    out = {"seconds": time.monotonic() - t0, "exit": proc.returncode}
    if not peaks.exists():
        return {**out, "error": proc.stderr.strip()[-300:]}
    figures = json.loads(peaks.read_text())
    out["peak_bytes"] = figures["child_peak_bytes"] + figures["self_peak_bytes"]
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    budget_control = (record.get("control") or {}).get("budget") or {}
    out["mechanisms"] = "+".join(budget_control.get("mechanisms") or [])
    out["end_reason"] = record.get("end_reason")
    return out


def growth(trials: int, before: str | None) -> int:
    versions = {"this tfres": None, **({"before": before} if before else {})}
    rows: dict[tuple[str, str], list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="tfres-bench-growth-") as tmp:
        for i in range(trials):
            order = list(versions.items())
            if i % 2:
                order.reverse()  # A/B interleaved, the order alternating
            for case, (program, budget) in GROWTH_CASES.items():
                for version, src in order:
                    tag = f"{case.replace(' ', '-')}-{version.replace(' ', '-')}-{i}"
                    r = growth_trial(program, budget, Path(tmp), tag, src)
                    rows.setdefault((case, version), []).append(r)
                    ratio = r.get("peak_bytes", 0) / budget
                    print(f"  {tag}: peak/budget {ratio:.3f}, exit {r['exit']}", file=sys.stderr)
    print(
        "| program | budget | tfres | trials | peak / budget, median | peak / budget, max "
        "| peak <= budget | mechanisms |"
    )
    print("|---|---|---|---|---|---|---|---|")
    ok = True
    for (case, version), results in rows.items():
        budget = GROWTH_CASES[case][1]
        ratios = [r.get("peak_bytes", 1 << 62) / budget for r in results]
        held = sum(x <= 1.0 for x in ratios)
        ok &= version != "this tfres" or held == len(ratios)
        mechanisms = ", ".join(sorted({r.get("mechanisms") or "?" for r in results}))
        print(
            f"| {case} | {budget // MiB} MiB | {version} | {len(results)} | "
            f"{statistics.median(ratios):.3f} | {max(ratios):.3f} | {held} of {len(ratios)} "
            f"| {mechanisms} |"
        )
    return 0 if ok else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="2 trials per mode, a smaller budget")
    p.add_argument("--growth", action="store_true", help="peak vs budget on fast growth")
    p.add_argument("--before", default=None, metavar="SRC", help="with --growth: another tfres")
    p.add_argument("--trials", type=int, default=None)
    p.add_argument("--headroom-mib", type=int, default=None)
    p.add_argument("--rate-mib-per-second", type=float, default=150.0)
    args = p.parse_args()
    if args.growth:
        return growth(args.trials or 5, args.before)
    trials = args.trials or (2 if args.quick else 10)
    headroom = (args.headroom_mib or (250 if args.quick else 400)) * MiB
    rate = args.rate_mib_per_second
    with tempfile.TemporaryDirectory(prefix="tfres-bench-budget-") as tmp:
        workdir = Path(tmp)
        cal_report = workdir / "calibrate.json"
        subprocess.run(
            [
                sys.executable,
                str(WORKLOAD),
                "--mode",
                "plain",
                "--calibrate",
                "--grow-to-bytes",
                "1e15",
                "--report",
                str(cal_report),
            ],
            check=True,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        )
        baseline = json.loads(cal_report.read_text())["peak_rss_bytes"]
        budget = baseline + headroom
        grow_to = 3 * budget
        print(
            f"baseline {baseline / MiB:.0f} MiB, budget {budget / MiB:.0f} MiB, workload grows "
            f"to {grow_to / MiB:.0f} MiB at {rate:g} MiB/s; {trials} trials per mode",
            file=sys.stderr,
        )
        results: dict[str, list[dict]] = {"sigterm": [], "callback": [], "plain": []}
        plain_trials = min(trials, 3)
        for i in range(trials):
            modes = ["sigterm", "callback"] + (["plain"] if i < plain_trials else [])
            if i % 2:
                modes.reverse()
            for mode in modes:
                r = run_workload(
                    mode, workdir, f"{mode}-{i}", budget=budget, grow_to=grow_to, rate=rate
                )
                r["pass"] = judge(r, budget)
                results[mode].append(r)
                print(
                    f"  trial {i} {mode:8s}: peak {r.get('peak_rss_bytes', 0) / MiB:7.0f} MiB "
                    f"({r.get('peak_rss_bytes', 0) / budget:.3f} of budget), "
                    f"{r.get('ended')}, pass={r['pass']}",
                    file=sys.stderr,
                )
    label = {
        "sigterm": "tfres run --memory-budget (SIGTERM, checkpoint)",
        "callback": "tfres.callbacks.MemoryBudget (in-process)",
        "plain": "no tfres",
    }
    print(
        f"\nbudget {budget / MiB:.0f} MiB (baseline {baseline / MiB:.0f} MiB + "
        f"{headroom / MiB:.0f} MiB); workload grows at {rate:g} MiB/s toward "
        f"{grow_to / MiB:.0f} MiB\n"
    )
    print(
        "| mode | trials | clean stop, checkpoint loads, reason/figures, peak <= budget+5% "
        "| peak / budget, median | peak / budget, max | seconds, median |"
    )
    print("|---|---|---|---|---|---|")
    for mode, rows in results.items():
        ratios = [r.get("peak_rss_bytes", 0) / budget for r in rows]
        passed = (
            "n/a (nothing stops it)"
            if mode == "plain"
            else f"{sum(r['pass'] for r in rows)} of {len(rows)}"
        )
        print(
            f"| {label[mode]} | {len(rows)} | {passed} | {statistics.median(ratios):.3f} | "
            f"{max(ratios):.3f} | {statistics.median(r['seconds'] for r in rows):.1f} |"
        )
    costs = read_costs()
    print(
        f"\nreading a {costs['rss_bytes'] / MiB:.0f} MiB TensorFlow process (PSS "
        f"{costs['pss_bytes'] / MiB:.0f} MiB): RSS {costs['rss_wall_ms'] * 1000:.0f} us "
        f"({costs['rss_cpu_ms'] * 1000:.0f} us CPU), PSS {costs['pss_wall_ms']:.2f} ms "
        f"({costs['pss_cpu_ms']:.2f} ms CPU) per reading; at 20 Hz PSS would take "
        f"{costs['pss_cpu_ms'] * 20 / 10:.1f}% of a core per process"
    )
    mechanisms = {
        tuple((r.get("control") or {}).get("mechanisms") or ()) for r in results["sigterm"]
    }
    print(f"\nmechanisms active under tfres run: {', '.join('+'.join(m) for m in mechanisms)}")
    ok = all(r["pass"] for mode in ("sigterm", "callback") for r in results[mode])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
