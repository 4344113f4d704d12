"""MLflow without a server: metric names against MLflow's own monitor, bounds, failures.

The tests against a real ``mlflow server`` are in tests/integration/test_mlflow_server.py.
"""

from __future__ import annotations

import contextlib
import logging
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tfres.cli import main
from tfres.record import Record
from tfres.timeline import GpuSample, Sample
from tfres.watch import mlflow_context
from tfres.watch.mlflow import fingerprint_params, record_tags, tracking_uri
from tfres.watch.mlflow_metrics import MetricStream, sample_values
from tfres.watch.mlflow_sink import MlflowSink


def mlflow_names(module: str) -> set[str]:
    """The metric names MLflow's own system-metrics monitor writes, read from its source."""
    import mlflow.system_metrics.metrics as metrics

    text = (Path(metrics.__file__).parent / f"{module}.py").read_text()
    return {m.replace("{i}", "0") for m in re.findall(r'_metrics\[f?"([a-z0-9_{}]+)"\]', text)}


def test_host_metrics_have_mlflow_names_and_agree_with_its_monitor():
    from mlflow.system_metrics.metrics.cpu_monitor import CPUMonitor

    from tfres.sampler.sampler import Sampler

    theirs = CPUMonitor()
    theirs.collect_metrics()
    sampler = Sampler(0.1, gpus=False)
    sampler.sample_once()
    time.sleep(0.2)  # CPU % is a difference of two readings
    ours = sample_values(sampler.sample_once())
    assert set(theirs.metrics) <= set(ours)
    assert set(theirs.metrics) == mlflow_names("cpu_monitor")
    key = "system_memory_usage_percentage"
    assert ours[key] == pytest.approx(theirs.metrics[key][0], abs=3.0)


def test_gpu_metrics_have_mlflow_names():
    sample = Sample(
        t_seconds=1.0,
        gpus=(
            GpuSample(
                0, util_percent=90, memory_used_bytes=4 * 10**9, memory_total_bytes=16 * 10**9,
                power_watts=250.0,
            ),
        ),
    )  # fmt: skip
    values = sample_values(sample)
    nvidia = mlflow_names("gpu_monitor") - {"gpu_0_power_usage_percentage"}  # needs the limit
    assert nvidia <= set(values)
    assert values["gpu_0_memory_usage_megabytes"] == 4000.0
    assert values["gpu_0_memory_usage_percentage"] == 25.0


def test_none_is_left_out_never_zero():
    values = sample_values(Sample(t_seconds=0.0, cpu_percent=None, gpus=(GpuSample(0),)))
    assert values == {}


def test_long_runs_are_bounded_and_start_at_full_resolution():
    stream = MetricStream(max_points=100)
    steps = []
    for i in range(10_000):
        points = stream.metrics(Sample(t_seconds=i * 0.1, cpu_percent=50.0), wall_seconds=i * 0.1)
        steps += [p[3] for p in points]
    assert steps[:100] == list(range(100))  # the first max_points samples: every one
    assert stream.logged == len(steps) < 100 + 50 * 8  # then max_points/2 per doubling
    assert steps[-1] >= 9_000  # the end of the run is still there


def test_network_is_cumulative_megabytes_like_mlflow():
    stream = MetricStream()
    for t in range(3):
        sample = Sample(
            t_seconds=float(t), net_recv_bytes_per_second=2e6, net_sent_bytes_per_second=1e6
        )
        points = {k: v for k, v, _, _ in stream.metrics(sample, wall_seconds=t)}
    assert points["system/network_receive_megabytes"] == pytest.approx(4.0)
    assert points["system/network_transmit_megabytes"] == pytest.approx(2.0)


def test_findings_are_tags_and_the_fingerprint_params():
    record = Record(kind="run", job="j", worker=2, label="exp")
    record.findings = [{"id": "input_bound", "severity": "warning", "title": "input waits"}]
    record.fingerprint = {
        "cpu": {"model": "AMD EPYC", "usable_cores": 2.0},
        "gpus": [{"name": "NVIDIA A100", "cuda_driver_version": "12.4"}],
        "tensorflow": {"installed": True, "version": "2.21.0", "build_info": {}},
        "host": {"hostname": "box"},
    }
    tags = record_tags(record)
    assert tags["tfres.findings"] == "input_bound"
    assert tags["tfres.finding.input_bound"] == "warning: input waits"
    assert tags["tfres.job"] == "j" and tags["tfres.worker"] == "2"
    assert fingerprint_params(record) == {
        "tfres.cpu": "AMD EPYC (2.0 usable cores)",
        "tfres.gpu": "NVIDIA A100",
        "tfres.tensorflow": "2.21.0",
        "tfres.cuda": "12.4",
        "tfres.host": "box",
    }


def test_tracking_uri_comes_from_the_option_then_the_environment(monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://env:5000/")
    assert tracking_uri("http://given:1") == "http://given:1"
    assert tracking_uri(True) == tracking_uri("") == "http://env:5000"
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    with pytest.raises(ValueError, match="--mlflow http://HOST:PORT or set MLFLOW_TRACKING_URI"):
        tracking_uri(None)


def test_run_mlflow_without_a_uri_is_a_usage_error_before_the_command(
    monkeypatch, tmp_path, capsys
):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    marker = tmp_path / "ran"
    argv = ["run", "--mlflow", "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    assert main(argv) == 2
    assert "MLFLOW_TRACKING_URI" in capsys.readouterr().err
    assert not marker.exists()


def feed(sink: MlflowSink, n: int) -> None:
    """Give ``sink`` ``n`` samples, as the sampler's thread does."""
    for i in range(n):
        sink.on_sample(Sample(t_seconds=i * 0.1, cpu_percent=10.0))


@contextlib.contextmanager
def silent_server() -> Iterator[tuple[int, list[socket.socket]]]:
    """A port that accepts connections and answers nothing; the connections it holds."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                pass

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1], held
    finally:
        stop.set()
        for s in held:
            s.close()
        listener.close()


def test_unreachable_server_is_one_warning_and_samples_stop_queueing(caplog):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    sink = MlflowSink(f"http://127.0.0.1:{port}", flush_seconds=0.05)
    with caplog.at_level(logging.WARNING, logger="tfres"):
        assert sink.start(Record(kind="run"), wait=True) is False
        feed(sink, 2000)
        assert sink.queued_points == 0  # a long run to a dead server piles nothing up
        t0 = time.monotonic()
        result = sink.finish(Record(kind="run"))
    assert time.monotonic() - t0 < 5
    assert "cannot be reached" in (result.error or "") and result.run_id is None
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "kept locally" in warnings[0].getMessage()


def test_samples_queue_while_the_server_holds_the_connection():
    """The sampler is never held up: every sample returns while the probe waits unanswered."""
    with silent_server() as (port, held):
        sink = MlflowSink(f"http://127.0.0.1:{port}", timeout_seconds=30.0)
        sink.start(Record(kind="run"))
        deadline = time.monotonic() + 10
        while not held and time.monotonic() < deadline:
            time.sleep(0.01)
        assert held, "the sink never connected"
        feed(sink, 500)
        assert sink.result.error is None  # the probe is still waiting for its answer
        per_sample = len(sample_values(Sample(t_seconds=0.0, cpu_percent=10.0)))
        assert sink.stream.logged == 500 and sink.queued_points == 500 * per_sample


def test_a_server_that_never_answers_times_out():
    with silent_server() as (port, _):
        sink = MlflowSink(f"http://127.0.0.1:{port}", timeout_seconds=1.0)
        sink.start(Record(kind="run"))
        feed(sink, 500)
        t0 = time.monotonic()
        result = sink.finish(Record(kind="run"))
        took = time.monotonic() - t0
    assert took < 3.5
    timed_out = r"cannot be reached \(timed out\)|did not answer within 1 s"
    assert re.search(timed_out, result.error or "")


def test_runs_made_under_tfres_are_tagged_with_its_session(monkeypatch):
    provider = mlflow_context.TfresRunContext()
    monkeypatch.delenv(mlflow_context.SESSION_ENV, raising=False)
    assert not provider.in_context()
    monkeypatch.setenv(mlflow_context.SESSION_ENV, "abc")
    assert provider.tags() == {"tfres.session": "abc"}
    mlflow_context.open_session("in-process")
    try:
        assert provider.tags() == {"tfres.session": "in-process"}  # the block wins
    finally:
        mlflow_context.close_session("in-process")


def test_mlflow_finds_the_provider_through_its_entry_point():
    from mlflow.tracking.context.registry import _run_context_provider_registry

    names = {type(p).__name__ for p in _run_context_provider_registry}
    assert "TfresRunContext" in names


def test_import_tfres_does_not_import_mlflow():
    code = "import sys, tfres; tfres.monitor; tfres.export; print('mlflow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
