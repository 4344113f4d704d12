"""A real Prometheus scraping two `tfres run --prometheus` workers, with the docs rules."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from conftest import free_port, start, stop

DOCS = Path(__file__).resolve().parents[2] / "docs" / "prometheus.md"

WORKER = """
import time, tfres
for _ in tfres.steps.timed(range(100000)):
    time.sleep({step_seconds})
"""


def rules_from_docs() -> str:
    """The YAML block after the tfres-rules.yml marker of docs/prometheus.md, as is."""
    text = DOCS.read_text()
    match = re.search(r"<!-- tfres-rules.yml.*?-->\s*```yaml\n(.*?)```", text, re.S)
    assert match, "docs/prometheus.md lost its tfres-rules.yml block"
    return match.group(1)


def dashboard_queries(job: str) -> list[str]:
    board = json.loads((DOCS.parent / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in board["panels"] for t in p["targets"]]
    assert len(exprs) >= 8
    return [e.replace("$job", job) for e in exprs]


def query(base: str, promql: str) -> list[dict]:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]["result"]


def test_prometheus_names_the_slow_worker_from_the_recording_rule(
    prometheus_binary, tmp_path, python
):
    ports = [free_port(), free_port()]
    workers = []
    for n, step_seconds in enumerate((0.03, 0.08)):
        argv = [python, "-m", "tfres", "run", "--no-store", "--prometheus"]
        argv += [f"127.0.0.1:{ports[n]}", "--job", "jobA", "--worker", str(n), "--"]
        argv += [python, "-c", WORKER.format(step_seconds=step_seconds)]
        workers.append(subprocess.Popen(argv, stderr=subprocess.DEVNULL, cwd=tmp_path))
    (tmp_path / "tfres-rules.yml").write_text(rules_from_docs())
    targets = ", ".join(f'"127.0.0.1:{p}"' for p in ports)
    (tmp_path / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "rule_files: [tfres-rules.yml]\n"
        "scrape_configs:\n"
        f"  - job_name: tfres\n    honor_labels: true\n"
        f"    static_configs: [{{targets: [{targets}]}}]\n"
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    argv = [prometheus_binary, f"--config.file={tmp_path / 'prometheus.yml'}"]
    argv += [f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"]
    server = start(argv, f"{base}/-/ready", tmp_path / "prometheus.log", 30)
    try:
        slow: list[dict] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not slow:
            time.sleep(1)
            slow = query(base, "tfres:step_duration_seconds:ratio_to_job_median > 1.2")
        means = query(base, "tfres:step_duration_seconds:mean1m")
        pending = query(base, 'ALERTS{alertname="TfresStragglerWorker"}')
        panels = {expr: query(base, expr) for expr in dashboard_queries("jobA")}
    finally:
        stop(server)
        for w in workers:
            w.terminate()
        for w in workers:
            w.wait(30)
    assert [(r["metric"]["job"], r["metric"]["worker"]) for r in slow] == [("jobA", "1")]
    assert float(slow[0]["value"][1]) > 1.2
    by_worker = {r["metric"]["worker"]: float(r["value"][1]) for r in means}
    assert 0.03 <= by_worker["0"] < 0.05 and 0.08 <= by_worker["1"] < 0.1  # sleep + overhead
    assert [a["metric"]["worker"] for a in pending] == ["1"]
    assert pending[0]["metric"]["alertstate"] in ("pending", "firing")
    # every query of the Grafana dashboard runs; all but the GPU panel have both workers
    for expr, result in panels.items():
        workers = {r["metric"].get("worker") for r in result}
        if "gpu" in expr:
            assert result == []  # no GPU here: left out, never 0
        elif "job_step_duration_seconds:median" in expr:
            assert len(result) == 1
        else:
            assert workers == {"0", "1"}, expr


def test_a_port_in_use_is_one_line_and_exit_1(tmp_path, python):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        argv = [python, "-m", "tfres", "run", "--no-store", "--prometheus", str(port)]
        done = subprocess.run(
            [*argv, "--", python, "-c", "pass"], capture_output=True, text=True, cwd=tmp_path
        )
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert f"127.0.0.1:{port}" in done.stderr and "Traceback" not in done.stderr


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run with pytest")
