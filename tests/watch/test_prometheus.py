"""Prometheus metrics: a real server on an ephemeral port, scraped over real HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

import tfres
from tfres.errors import TfresError
from tfres.timeline import GpuSample, Sample
from tfres.watch.prometheus import PrometheusExporter, parse_address


def scrape(url: str) -> dict[str, list]:
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        text = response.read().decode()
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


SAMPLE = Sample(
    t_seconds=3.5,
    cpu_percent=40.0,
    cpu_per_core_percent=(20.0, 60.0),
    memory_used_bytes=3 * 2**30,
    memory_available_bytes=5 * 2**30,
    process_cpu_percent=150.0,
    process_cpu_share_percent=75.0,
    process_rss_bytes=2**30,
    process_uss_bytes=None,
    gpus=(
        GpuSample(
            index=0,
            util_percent=93.0,
            memory_used_bytes=8 * 2**30,
            sm_clock_mhz=1410,
            throttle_reasons=("sw_power_cap",),
        ),
    ),
    tf_memory={"GPU:0": {"current_bytes": 5 * 2**30, "peak_bytes": 6 * 2**30}},
)


def test_metrics_use_prometheus_names_units_and_ratios():
    exporter = PrometheusExporter("127.0.0.1:0", job="resnet", worker=2)
    try:
        assert scrape(exporter.url) == {}  # nothing before the first sample
        exporter.update(SAMPLE)
        metrics = scrape(exporter.url)
    finally:
        exporter.close()
    (gpu,) = metrics["tfres_gpu_utilization_ratio"]
    assert gpu.value == pytest.approx(0.93)
    assert gpu.labels == {"gpu": "0", "job": "resnet", "worker": "2"}
    (rss,) = metrics["tfres_process_resident_memory_bytes"]
    assert rss.value == 2**30 and rss.labels == {"job": "resnet", "worker": "2"}
    assert metrics["tfres_cpu_utilization_ratio"][0].value == pytest.approx(0.4)
    assert metrics["tfres_process_cpu_utilization_ratio"][0].value == pytest.approx(0.75)
    assert metrics["tfres_process_cpu_cores"][0].value == pytest.approx(1.5)
    cores = {s.labels["core"]: s.value for s in metrics["tfres_cpu_core_utilization_ratio"]}
    assert cores == {"0": pytest.approx(0.2), "1": pytest.approx(0.6)}
    assert metrics["tfres_gpu_sm_clock_hertz"][0].value == 1410e6
    (throttle,) = metrics["tfres_gpu_throttled"]
    assert throttle.labels["reason"] == "sw_power_cap"
    assert metrics["tfres_tensorflow_memory_bytes"][0].labels["device"] == "GPU:0"
    # what could not be read is left out, never reported as 0
    assert "tfres_process_unique_memory_bytes" not in metrics
    assert "tfres_gpu_power_watts" not in metrics


def test_no_job_labels_when_none_are_set():
    exporter = PrometheusExporter(0)
    try:
        exporter.update(SAMPLE)
        (rss,) = scrape(exporter.url)["tfres_process_resident_memory_bytes"]
    finally:
        exporter.close()
    assert rss.labels == {}


def test_binds_to_localhost_unless_told():
    exporter = PrometheusExporter("0")
    try:
        assert exporter.host == "127.0.0.1"
        assert exporter._server.socket.getsockname()[0] == "127.0.0.1"
        assert exporter.url == f"http://127.0.0.1:{exporter.port}/metrics"
    finally:
        exporter.close()


def test_a_taken_port_is_a_clear_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(TfresError, match=f"127.0.0.1:{port}.*--prometheus"):
            PrometheusExporter(port)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("9100", ("127.0.0.1", 9100)), ("0.0.0.0:9100", ("0.0.0.0", 9100)), ("[::1]:80", ("::1", 80))],
)
def test_addresses(text, expected):
    assert parse_address(text) == expected


@pytest.mark.parametrize("bad", ["abc", "70000", "host:", "[::1]9100", "-1"])
def test_bad_addresses_name_the_value(bad):
    with pytest.raises(ValueError, match="port|address"):
        parse_address(bad)


def test_monitor_serves_live_values_while_the_block_runs():
    with tfres.monitor(interval=0.05, store=False, prometheus="127.0.0.1:0", job="j") as m:
        data = bytearray(16 * 2**20)
        time.sleep(0.2)
        metrics = scrape(m.prometheus.url)
    (rss,) = metrics["tfres_process_resident_memory_bytes"]
    assert rss.value > 16 * 2**20 and rss.labels == {"job": "j"}
    assert metrics["tfres_elapsed_seconds"][0].value > 0
    with pytest.raises(OSError):  # closed with the block
        urllib.request.urlopen(m.prometheus.url, timeout=2)
    del data


def test_tfres_run_prometheus_serves_the_commands_tree(python, tmp_path):
    ready = tmp_path / "ready"
    child = (
        f"import pathlib, time; x = bytearray(64 * 2**20); pathlib.Path({str(ready)!r}).touch();"
        " time.sleep(30)"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tfres",
            "run",
            "--no-store",
            "--interval",
            "0.05",
            "--prometheus",
            "127.0.0.1:0",
            "--job",
            "exp",
            "--worker",
            "1",
            "--",
            python,
            "-c",
            child,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        line = proc.stderr.readline()
        assert line.startswith("tfres: Prometheus metrics at http://127.0.0.1:")
        url = line.split(" at ", 1)[1].strip()
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        metrics = scrape(url)
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    (rss,) = metrics["tfres_process_resident_memory_bytes"]
    assert rss.value > 64 * 2**20
    assert rss.labels == {"job": "exp", "worker": "1"}
