"""What watching costs, whole processes: `tfres run` against a bare psutil loop and MLflow.

    python benchmarks/overhead.py             # 5 runs per watcher, 30 s windows, 3 fit pairs
    python benchmarks/overhead.py --quick     # 3 runs, 8 s windows, 2 fit pairs (~5 min)
    python benchmarks/overhead.py --baseline /tmp/old/src --only-tfres   # A/B two trees
    python benchmarks/overhead.py --threads [--baseline SRC]   # which thread costs what

With ``--baseline SRC`` (the ``src`` folder of another tfres tree, e.g. from ``git archive``)
each ``tfres run`` row is measured for this tree and for that one, interleaved run by run
(ABBA), both started as ``python -m tfres`` (``PYTHONPATH=SRC`` for the baseline).

On a machine with ``--others`` (100) extra idle processes started for the run, measures
side by side, each watcher a separate process whose CPU (user+system, every thread) the
kernel counts:

a. the steady cost per second of wall time of
   - ``tfres run --no-store --interval I -- sleep N`` at 10 Hz and 100 Hz;
   - the floor: a bare psutil loop doing the same reads at the same interval (per-core CPU,
     memory, swap, disk and network at most 10 Hz, the command's tree with
     ``children(recursive=True)`` so a new worker is seen within one interval, and each
     process's CPU, RSS and threads), started the same way on the same command;
   - MLflow's system-metrics monitor (``mlflow.start_run(log_system_metrics=True)``) at
     1 s, the shortest interval it documents, around the same command;
   - an nvitop/gpustat-style NVML polling loop at 10 Hz (utilisation, memory, power,
     temperature, processes of every GPU), where NVML opens (skipped otherwise).
   The watcher's CPU (``/proc/PID/stat``, every thread) is read 3 s after it started and
   again a window later: the steady cost, start-up and saving left out, as % of one core,
   the median over runs;
b. a Keras ``model.fit`` run as a plain ``python`` command and under ``tfres run
   --interval 0.1`` (the child times its own fit after a warm-up fit), A/B interleaved: the
   median over pairs of the throughput ratio.

Prints markdown tables; docs/benchmarks/overhead.md has the figures and how to read them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

PYTHON = sys.executable
#: the tfres command: the script beside this interpreter, else ``python -m tfres`` (tfres on
#: PYTHONPATH only, as on a machine where it is not installed)
_SCRIPT = Path(sys.executable).with_name("tfres")
TFRES = [str(_SCRIPT)] if _SCRIPT.exists() else [PYTHON, "-m", "tfres"]

FLOOR = textwrap.dedent(
    """
    import subprocess, sys, time, psutil
    interval, seconds = float(sys.argv[1]), sys.argv[2]
    child = subprocess.Popen(["sleep", seconds])
    root = psutil.Process(child.pid)
    next_io = 0.0
    deadline = time.monotonic()
    while child.poll() is None:
        now = time.monotonic()
        psutil.cpu_times(percpu=True); psutil.virtual_memory(); psutil.swap_memory()
        if now >= next_io:
            psutil.disk_io_counters(); psutil.net_io_counters(); next_io = now + 0.09
        try:
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            procs = []
        for p in procs:
            try:
                with p.oneshot():
                    p.cpu_times(); p.memory_info(); p.num_threads()
            except psutil.Error:
                pass
        deadline += interval
        time.sleep(max(0.0, deadline - time.monotonic()))
    """
)

MLFLOW = textwrap.dedent(
    """
    import logging, subprocess, sys, warnings
    warnings.filterwarnings("ignore")
    import mlflow
    logging.getLogger("mlflow").setLevel(logging.ERROR)
    interval, seconds, store = float(sys.argv[1]), sys.argv[2], sys.argv[3]
    mlflow.set_tracking_uri("file://" + store)
    mlflow.set_experiment("tfres-overhead")
    mlflow.set_system_metrics_sampling_interval(interval)
    mlflow.set_system_metrics_samples_before_logging(1)
    with mlflow.start_run(log_system_metrics=True):
        subprocess.run(["sleep", seconds])
    """
)

NVML_POLL = textwrap.dedent(
    """
    import subprocess, sys, time, pynvml
    interval, seconds = float(sys.argv[1]), sys.argv[2]
    pynvml.nvmlInit()
    handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
    child = subprocess.Popen(["sleep", seconds])
    deadline = time.monotonic()
    while child.poll() is None:
        for h in handles:
            pynvml.nvmlDeviceGetUtilizationRates(h); pynvml.nvmlDeviceGetMemoryInfo(h)
            pynvml.nvmlDeviceGetPowerUsage(h)
            pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)
            pynvml.nvmlDeviceGetComputeRunningProcesses(h)
        deadline += interval
        time.sleep(max(0.0, deadline - time.monotonic()))
    """
)

FIT = textwrap.dedent(
    """
    import os, time
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np, keras
    n = int(os.environ["BENCH_SAMPLES"])
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 64)).astype("float32"); y = rng.normal(size=(n, 1)).astype("float32")
    model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(256, activation="relu"),
                              keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(x[:20000], y[:20000], batch_size=256, epochs=1, verbose=0)  # trace, warm up
    t = time.perf_counter()
    model.fit(x, y, batch_size=256, epochs=1, verbose=0)
    print(n / (time.perf_counter() - t))
    """
)


_TICKS = os.sysconf("SC_CLK_TCK")
#: seconds left for a watcher to start (import, first sample) before its CPU is read
WARMUP_SECONDS = 3.0


def _cpu_seconds(pid: int) -> float:
    """User+system CPU seconds of the process ``pid``, all its threads (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        fields = fh.read().rpartition(b")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def one_cost(make_argv: Any, window: float, env: dict[str, str]) -> float:
    """CPU per wall second (% of one core) of one watcher over ``window`` s of steady state.

    The watcher runs ``sleep WARMUP+window+2``; its CPU is read after the warm-up and again
    ``window`` seconds later, so neither its start-up nor its saving of results counts.
    """
    argv = make_argv(f"{WARMUP_SECONDS + window + 2:g}")
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        time.sleep(WARMUP_SECONDS)
        cpu0, t0 = _cpu_seconds(proc.pid), time.monotonic()
        time.sleep(window)
        cpu1, t1 = _cpu_seconds(proc.pid), time.monotonic()
    finally:
        _, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[:4]} exited {proc.returncode}: {err[-600:]!r}")
    return 100.0 * (cpu1 - cpu0) / (t1 - t0)


def _thread_ns(pid: int) -> dict[str, tuple[str, int, int]]:
    """tid -> (name, CPU ns from schedstat, voluntary context switches) of every thread."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            base = f"/proc/{pid}/task/{tid}"
            name = Path(f"{base}/comm").read_text().strip()
            ns = int(Path(f"{base}/schedstat").read_text().split()[0])
            status = Path(f"{base}/status").read_text()
            wakes = int(status.split("voluntary_ctxt_switches:")[1].split()[0])
        except (OSError, IndexError, ValueError):
            continue
        out[tid] = (name, ns, wakes)
    return out


def thread_costs(interval: str, window: float, env: dict[str, str], tfres: list[str]) -> list:
    """Per-thread CPU (% of one core, wakes per second, us per wake) of ``tfres run --
    sleep`` over ``window`` s after the warm-up (schedstat: ns, not 10 ms ticks)."""
    argv = [*tfres, "run", "--no-store", "--interval", interval, "--", "sleep"]
    proc = subprocess.Popen([*argv, f"{WARMUP_SECONDS + window + 2:g}"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        time.sleep(WARMUP_SECONDS)
        before, t0 = _thread_ns(proc.pid), time.monotonic()
        time.sleep(window)
        after, t1 = _thread_ns(proc.pid), time.monotonic()
    finally:
        proc.wait()
    rows = []
    for i, (tid, (name, ns, wakes)) in enumerate(sorted(after.items(), key=lambda kv: int(kv[0]))):
        name0, ns0, wakes0 = before.get(tid, (name, 0, 0))
        woke = (wakes - wakes0) / (t1 - t0)
        cpu = (ns - ns0) / 1e9 / (t1 - t0)
        label = "main" if i == 0 else f"thread {i} ({name})"
        rows.append((label, 100 * cpu, woke, 1e6 * cpu / woke if woke else 0.0))
    return rows


def print_threads(args: argparse.Namespace, env: dict[str, str]) -> None:
    trees = [("this tree", env)]
    if args.baseline:
        trees.append((f"baseline {args.baseline}", {**env, "PYTHONPATH": args.baseline}))
    print("| tree | rate | thread | CPU, % of one core | wakes/s | CPU per wake |")
    print("|---|---|---|---|---|---|")
    for repeat in range(args.repeats or 1):
        for name, tree_env in trees if repeat % 2 == 0 else trees[::-1]:
            for interval, rate in (("0.1", "10 Hz"), ("0.01", "100 Hz")):
                rows = thread_costs(interval, args.seconds or 20.0, tree_env,
                                    [PYTHON, "-m", "tfres"])  # fmt: skip
                for label, cpu, woke, per in rows:
                    print(f"| {name} | {rate} | {label} | {cpu:.3f}% | {woke:.1f} | "
                          f"{per:.0f} us |", flush=True)  # fmt: skip


def _summary(costs: list[float]) -> dict:
    return {"median": statistics.median(costs), "min": min(costs), "max": max(costs)}


def steady_cost(make_argv: Any, repeats: int, window: float, env: dict[str, str]) -> dict:
    """:func:`one_cost` ``repeats`` times: the median, min and max."""
    return _summary([one_cost(make_argv, window, env) for _ in range(repeats)])


def steady_cost_ab(
    make_argv: Any, repeats: int, window: float, env: dict[str, str], baseline: str
) -> tuple[dict, dict]:
    """This tree (A) and the tree at ``baseline`` (B), interleaved ABBA, one run each in turn."""
    env_b = {**env, "PYTHONPATH": baseline}
    a: list[float] = []
    b: list[float] = []
    for i in range(repeats):
        for which in "AB" if i % 2 == 0 else "BA":
            if which == "A":
                a.append(one_cost(make_argv, window, env))
            else:
                b.append(one_cost(make_argv, window, env_b))
    return _summary(a), _summary(b)


def fit_ratio(pairs: int, samples: int, env: dict[str, str]) -> dict:
    """Throughput of a Keras fit under `tfres run --interval 0.1` over the same fit bare."""
    env = {**env, "BENCH_SAMPLES": str(samples)}
    bare = [PYTHON, "-c", FIT]
    watched = [*TFRES, "run", "--no-store", "--interval", "0.1", "--", *bare]

    def throughput(argv: list[str]) -> float:
        out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
        return float(out.stdout.strip().splitlines()[-1])

    ratios, base = [], []
    for i in range(pairs):
        if i % 2 == 0:
            a = throughput(bare)
            b = throughput(watched)
        else:
            b = throughput(watched)
            a = throughput(bare)
        base.append(a)
        ratios.append(b / a)
    return {
        "median": statistics.median(ratios),
        "min": min(ratios),
        "max": max(ratios),
        "base": statistics.median(base),
    }


def _nvml_opens() -> str | None:
    try:
        import pynvml

        pynvml.nvmlInit()
        pynvml.nvmlShutdown()
        return None
    except Exception as err:  # no driver here: the NVML loop does not apply
        return f"NVML does not open here ({type(err).__name__})"


def watchers(store: str, tfres: list[str]) -> list[tuple[str, Any, str | None]]:
    nvml_reason = _nvml_opens()
    try:
        import mlflow  # noqa: F401

        mlflow_reason = None
    except ImportError:
        mlflow_reason = "mlflow is not installed"
    return [
        ("tfres run, 10 Hz", lambda n: [*tfres, "run", "--no-store", "--interval", "0.1",
                                        "--", "sleep", n], None),
        ("tfres run, 100 Hz", lambda n: [*tfres, "run", "--no-store", "--interval", "0.01",
                                         "--", "sleep", n], None),
        ("bare psutil loop (floor), 10 Hz", lambda n: [PYTHON, "-c", FLOOR, "0.1", n], None),
        ("bare psutil loop (floor), 100 Hz", lambda n: [PYTHON, "-c", FLOOR, "0.01", n], None),
        ("MLflow system metrics, 1 s", lambda n: [PYTHON, "-c", MLFLOW, "1", n, store],
         mlflow_reason),
        ("NVML polling loop (nvitop/gpustat style), 10 Hz",
         lambda n: [PYTHON, "-c", NVML_POLL, "0.1", n], nvml_reason),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 runs of 8 s, 2 fit pairs")
    parser.add_argument("--repeats", type=int, default=None, help="runs per watcher (5; quick 3)")
    parser.add_argument("--seconds", type=float, default=None, help="window (30; quick 8)")
    parser.add_argument("--others", type=int, default=100, help="idle processes to add (100)")
    parser.add_argument("--no-fit", action="store_true", help="skip the Keras fit ratio")
    parser.add_argument(
        "--baseline", metavar="SRC", help="also run tfres from this src folder, interleaved"
    )
    parser.add_argument(
        "--only-tfres", action="store_true", help="only the tfres run rows (no floor, MLflow)"
    )
    parser.add_argument(
        "--threads", action="store_true", help="per-thread CPU of tfres run at 10 and 100 Hz"
    )
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 5)
    seconds = args.seconds or (8.0 if args.quick else 30.0)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "MLFLOW_ALLOW_FILE_STORE": "true"}
    idle = [subprocess.Popen(["sleep", "3600"]) for _ in range(args.others)]
    try:
        if args.threads:
            print_threads(args, env)
            return 0
        processes = sum(1 for name in os.listdir("/proc") if name.isdigit())
        print(f"## What watching costs ({'quick' if args.quick else 'full'} run)\n")
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {processes} processes "
              f"on the machine, CPU over {seconds:g} s windows, {repeats} runs each\n")  # fmt: skip
        print("| watcher | CPU, % of one core (median) | min-max |")
        print("|---|---|---|")
        with tempfile.TemporaryDirectory(prefix="tfres-bench-mlflow-") as store:
            tfres = [PYTHON, "-m", "tfres"] if args.baseline else TFRES
            for name, make_argv, skipped in watchers(store, tfres):
                is_tfres = name.startswith("tfres run")
                if args.only_tfres and not is_tfres:
                    continue
                if skipped:
                    print(f"| {name} | skipped: {skipped} | |")
                    continue
                if args.baseline and is_tfres:
                    cost, base = steady_cost_ab(make_argv, repeats, seconds, env, args.baseline)
                    print(f"| {name}, baseline {args.baseline} | **{base['median']:.2f}%** | "
                          f"{base['min']:.2f}-{base['max']:.2f} |")  # fmt: skip
                else:
                    cost = steady_cost(make_argv, repeats, seconds, env)
                print(f"| {name} | **{cost['median']:.2f}%** | "
                      f"{cost['min']:.2f}-{cost['max']:.2f} |", flush=True)  # fmt: skip
        if not args.no_fit:
            fit = fit_ratio(2 if args.quick else 3, 150_000 if args.quick else 300_000, env)
            print("\n| Keras fit | pairs | samples/s bare | ratio under `tfres run` (median) "
                  "| min-max |\n|---|---|---|---|---|")  # fmt: skip
            print(f"| MLP 64-256-256-1, batch 256 | {2 if args.quick else 3} | "
                  f"{fit['base']:.0f} | **{fit['median']:.3f}** | "
                  f"{fit['min']:.3f}-{fit['max']:.3f} |")  # fmt: skip
    finally:
        for proc in idle:
            proc.kill()
            proc.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
