"""Step histograms of the Prometheus exporter: real HTTP scrapes, real steps files."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

import tfres
from tfres.watch.prometheus import PrometheusExporter
from tfres.watch.prometheus_steps import STEP_BUCKETS_SECONDS


def scrape(url: str) -> dict[str, list]:
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def by_name(samples: list, suffix: str) -> dict[str, float]:
    return {s.labels.get("le", ""): s.value for s in samples if s.name.endswith(suffix)}


def line(duration: float, wait: float, step: int) -> str:
    row = {"t_seconds": step * 0.1, "duration_seconds": duration, "step": step}
    row.update(input_wait_seconds=wait, t_monotonic=time.monotonic(), t_wall=time.time())
    return json.dumps(row) + "\n"


def test_steps_file_is_read_incrementally_as_histograms(tmp_path):
    path = tmp_path / "steps.jsonl"
    path.write_text("")
    exporter = PrometheusExporter("127.0.0.1:0", job="j", worker=1)
    exporter.follow_steps(path)
    try:
        assert "tfres_step_duration_seconds" not in scrape(exporter.url)  # no steps yet
        with open(path, "a") as fh:
            fh.write(line(0.03, 0.01, 0) + line(0.05, 0.02, 1))
            fh.write("{not json\n")  # a damaged line is skipped
            fh.write(line(0.2, 0.1, 2)[:20])  # a line being written waits
        first = scrape(exporter.url)["tfres_step_duration_seconds"]
        with open(path, "a") as fh:
            fh.write(line(0.2, 0.1, 2)[20:])
        second = scrape(exporter.url)
    finally:
        exporter.close()
    assert by_name(first, "_count") == {"": 2.0}
    assert by_name(first, "_sum")[""] == pytest.approx(0.08)
    steps = second["tfres_step_duration_seconds"]
    assert by_name(steps, "_count") == {"": 3.0}  # each line counted once, across scrapes
    buckets = by_name(steps, "_bucket")
    assert buckets["0.025"] == 0 and buckets["0.04"] == 1 and buckets["0.06"] == 2
    assert buckets["0.25"] == 3 and buckets["+Inf"] == 3
    assert len(buckets) == len(STEP_BUCKETS_SECONDS) + 1
    waits = second["tfres_step_input_wait_seconds"]
    assert by_name(waits, "_sum")[""] == pytest.approx(0.13)
    assert {s.labels["job"] for s in steps} == {"j"} and {s.labels["worker"] for s in steps} == {
        "1"
    }


def test_monitor_exports_the_steps_of_its_block():
    with tfres.monitor(store=False, prometheus="127.0.0.1:0", interval=0.05) as m:
        for _ in tfres.steps.timed(range(4), monitor=m):
            time.sleep(0.01)
        metrics = scrape(m.prometheus.url)
    assert by_name(metrics["tfres_step_duration_seconds"], "_count") == {"": 4.0}
    total = by_name(metrics["tfres_step_duration_seconds"], "_sum")[""]
    assert total == pytest.approx(sum(s["duration_seconds"] for s in m.record.steps))
