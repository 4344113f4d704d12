"""What ``--mlflow`` costs: the watched command's own speed, tfres's wall time, per-sample cost.

    python benchmarks/mlflow_sink.py [--pairs 3] [--uri http://127.0.0.1:5000]

Without ``--uri`` a ``mlflow server`` (SQLite backend) is started on a free port and
stopped at the end. Three sides run interleaved (A, B, C in turn, ``--pairs`` rounds):

- A: ``tfres run -- python work.py`` (no MLflow);
- B: the same with ``--mlflow URI`` (a live server);
- C: the same with ``--mlflow`` to a port where nothing listens.

``work.py`` times a fixed pure-Python loop itself and prints the seconds: the command's own
speed, which MLflow must never slow. Also reported: tfres's wall time (what the user waits
for, including MLflow's import and the upload at the end), and the cost of one
``MlflowSink.on_sample`` call on the sampler's thread (median of 20,000 calls).
Results: docs/benchmarks/mlflow.md.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

WORK = """
import time
t0 = time.perf_counter()
total = 0
for i in range(12_000_000):
    total += i * i
print(f"{time.perf_counter() - t0:.4f}")
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    argv = [str(Path(sys.executable).with_name("mlflow")), "server", "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--workers", "1"]
    argv += ["--backend-store-uri", f"sqlite:///{folder}/mlflow.db"]
    argv += ["--artifacts-destination", str(folder / "artifacts")]
    env = dict(os.environ, MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false")
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True
    )
    uri = f"http://127.0.0.1:{port}"
    t0 = time.monotonic()
    while time.monotonic() - t0 < 120:
        try:
            with urllib.request.urlopen(uri + "/health", timeout=2):
                print(f"mlflow server ready in {time.monotonic() - t0:.1f} s", file=sys.stderr)
                return proc, uri
        except OSError:
            time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGKILL)
    raise SystemExit("mlflow server did not start in 120 s")


def one_run(mlflow: str | None, folder: Path) -> tuple[float, float]:
    """(the command's own seconds, tfres's wall seconds)."""
    argv = [sys.executable, "-m", "tfres", "run", "--no-store"]
    if mlflow is not None:
        argv += ["--mlflow", mlflow]
    script = folder / "work.py"
    script.write_text(WORK)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    t0 = time.perf_counter()
    done = subprocess.run(
        [*argv, "--", sys.executable, str(script)], capture_output=True, text=True, env=env
    )
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"tfres run failed: {done.stderr[-800:]}")
    return float(done.stdout.strip().splitlines()[-1]), wall


def on_sample_cost(uri: str) -> float:
    """Median seconds of one on_sample call, with the sink streaming to ``uri``."""
    from tfres.record import Record
    from tfres.timeline import GpuSample, Sample
    from tfres.watch.mlflow_metrics import sample_values
    from tfres.watch.mlflow_sink import MlflowSink

    sink = MlflowSink(uri, flush_seconds=0.5)
    sink.start(Record(kind="run", label="bench-on-sample"), wait=True)
    gpu = GpuSample(0, util_percent=50.0, memory_used_bytes=10**9, memory_total_bytes=10**10)
    costs = []
    for i in range(20_000):
        sample = Sample(
            t_seconds=i * 0.1, cpu_percent=50.0, memory_used_bytes=10**9,
            memory_available_bytes=10**9, process_rss_bytes=10**8, gpus=(gpu,),
        )  # fmt: skip
        t0 = time.perf_counter()
        sink.on_sample(sample)
        costs.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    result = sink.finish(Record(kind="run"))
    took = time.perf_counter() - t0
    if result.error:
        raise SystemExit(f"the sink failed: {result.error}")
    points = sink.stream.logged * len(sample_values(sample))
    print(f"backlog of {points} points sent by finish() in {took:.1f} s", file=sys.stderr)
    return statistics.median(costs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--uri", default=None, help="an MLflow server to use (else one is started)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tfres-bench-mlflow-") as tmp:
        folder = Path(tmp)
        server, uri = (None, args.uri) if args.uri else start_server(folder)
        dead = f"http://127.0.0.1:{free_port()}"
        try:
            sides: dict[str, list[tuple[float, float]]] = {"A": [], "B": [], "C": []}
            for _ in range(args.pairs):
                sides["A"].append(one_run(None, folder))
                sides["B"].append(one_run(uri, folder))
                sides["C"].append(one_run(dead, folder))
            cost = on_sample_cost(uri)
        finally:
            if server is not None:
                os.killpg(server.pid, signal.SIGTERM)
                server.wait(30)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}; pairs: {args.pairs}")
    print("side                         command s (median)   tfres wall s (median)")
    names = {"A": "A no --mlflow", "B": "B --mlflow live server", "C": "C --mlflow unreachable"}
    for key, runs in sides.items():
        own = statistics.median(r[0] for r in runs)
        wall = statistics.median(r[1] for r in runs)
        print(f"{names[key]:<28} {own:>10.3f}            {wall:>10.2f}")
    a_own = [r[0] for r in sides["A"]]
    for key in ("B", "C"):
        ratios = [b[0] / a for (b, a) in zip(sides[key], a_own, strict=True)]
        print(f"command time {key}/A per round: {', '.join(f'{r:.3f}' for r in ratios)}; "
              f"median {statistics.median(ratios):.3f}")  # fmt: skip
    print(f"on_sample: median {cost * 1e6:.1f} us a call (20,000 calls, one GPU in the sample)")


if __name__ == "__main__":
    main()
