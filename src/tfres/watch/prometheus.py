"""Live metrics for Prometheus: the newest sample, served over HTTP while a run goes on.

    tfres run --prometheus 9100 -- python train.py     # then scrape http://127.0.0.1:9100/metrics
    with tfres.monitor(prometheus="0.0.0.0:9100", job="resnet", worker=0): ...

Names follow Prometheus conventions: a ``tfres_`` prefix, base units in the name (bytes,
seconds, watts, celsius, hertz) and ratios from 0 to 1 (``tfres_gpu_utilization_ratio`` is
``nvidia-smi``'s ``utilization.gpu`` / 100). ``job`` and ``worker`` labels are set when the
run has them, so one Prometheus can watch every worker of a cluster. A value that could not
be read is left out of the scrape, never reported as 0. The server listens on 127.0.0.1
unless a host is given. Once the run's steps are known (``tfres.steps.timed``, the Keras
hook of ``tfres run``), ``tfres_step_duration_seconds`` and ``tfres_step_input_wait_seconds``
histograms are served too (:mod:`tfres.watch.prometheus_steps`); docs/prometheus.md has a
scrape configuration for N workers, recording rules and a straggler alert.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from tfres.errors import TfresError
from tfres.timeline import Sample
from tfres.watch.prometheus_steps import StepHistograms

__all__ = ["PrometheusExporter", "parse_address", "METRICS"]

log = logging.getLogger("tfres")

#: (metric name, help, Sample attribute, scale) of the host and process gauges
METRICS: tuple[tuple[str, str, str, float], ...] = (
    ("tfres_elapsed_seconds", "Seconds since the watched run started.", "t_seconds", 1.0),
    ("tfres_cpu_utilization_ratio", "Host CPU busy, 0-1 over all cores.", "cpu_percent", 0.01),
    ("tfres_memory_used_bytes", "Host memory in use (total - available).", "memory_used_bytes", 1),
    ("tfres_memory_available_bytes", "Host memory available.", "memory_available_bytes", 1),
    ("tfres_swap_used_bytes", "Swap in use.", "swap_used_bytes", 1),
    ("tfres_disk_read_bytes_per_second", "Disk reads, all disks.", "disk_read_bytes_per_second", 1),
    ("tfres_disk_written_bytes_per_second", "Disk writes.", "disk_write_bytes_per_second", 1),
    ("tfres_network_transmit_bytes_per_second", "Net sent.", "net_sent_bytes_per_second", 1),
    ("tfres_network_receive_bytes_per_second", "Net received.", "net_recv_bytes_per_second", 1),
    (
        "tfres_process_cpu_utilization_ratio",
        "CPU of the watched processes, 0-1 of the cores they may use (cgroup quota or affinity).",
        "process_cpu_share_percent",
        0.01,
    ),
    (
        "tfres_process_cpu_cores",
        "CPU of the watched processes in busy cores (1 = one core).",
        "process_cpu_percent",
        0.01,
    ),
    (
        "tfres_process_resident_memory_bytes",
        "Resident memory (RSS) of the watched processes.",
        "process_rss_bytes",
        1,
    ),
    (
        "tfres_process_unique_memory_bytes",
        "Unique memory (USS) of the watched processes.",
        "process_uss_bytes",
        1,
    ),
    ("tfres_process_threads", "Threads of the watched processes.", "process_threads", 1),
    ("tfres_processes", "Number of watched processes.", "process_count", 1),
)

#: (metric name, help, GpuSample attribute, scale) of the per-GPU gauges
GPU_METRICS: tuple[tuple[str, str, str, float], ...] = (
    (
        "tfres_gpu_utilization_ratio",
        "GPU busy, 0-1 (nvidia-smi utilization.gpu).",
        "util_percent",
        0.01,
    ),
    (
        "tfres_gpu_memory_utilization_ratio",
        "GPU memory bandwidth busy, 0-1 (utilization.memory).",
        "memory_util_percent",
        0.01,
    ),
    ("tfres_gpu_memory_used_bytes", "GPU memory used (memory.used).", "memory_used_bytes", 1),
    ("tfres_gpu_memory_total_bytes", "GPU memory total.", "memory_total_bytes", 1),
    ("tfres_gpu_power_watts", "GPU power draw (power.draw).", "power_watts", 1),
    ("tfres_gpu_temperature_celsius", "GPU temperature.", "temperature_celsius", 1),
    ("tfres_gpu_sm_clock_hertz", "GPU SM clock.", "sm_clock_mhz", 1e6),
    ("tfres_gpu_pcie_receive_bytes_per_second", "PCIe to the GPU.", "pcie_rx_bytes_per_second", 1),
    (
        "tfres_gpu_pcie_transmit_bytes_per_second",
        "PCIe from the GPU.",
        "pcie_tx_bytes_per_second",
        1,
    ),
    (
        "tfres_gpu_engine_active_ratio",
        "Compute engine running kernels, 0-1 (NVML GPM; copies left out; Hopper on).",
        "engine_active_percent",
        0.01,
    ),
    (
        "tfres_gpu_sm_active_ratio",
        "Share of SMs busy, 0-1 (NVML GPM; Hopper on).",
        "sm_active_percent",
        0.01,
    ),
    (
        "tfres_gpu_process_memory_used_bytes",
        "GPU memory held by the watched processes.",
        "process_memory_used_bytes",
        1,
    ),
)


def parse_address(address: str | int) -> tuple[str, int]:
    """``"9100"`` -> ``("127.0.0.1", 9100)``; ``"0.0.0.0:9100"``; ``"[::1]:9100"``.

    Port 0 picks a free port. Raises ValueError naming the value.
    """
    text = str(address).strip()
    host = "127.0.0.1"
    port_text = text
    if text.startswith("["):  # [IPv6]:PORT
        end = text.find("]")
        if end < 0 or not text[end + 1 :].startswith(":"):
            raise ValueError(f"cannot read address {text!r}; write it like '[::1]:9100'")
        host, port_text = text[1:end], text[end + 2 :]
    elif ":" in text:
        host, _, port_text = text.rpartition(":")
        host = host or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(
            f"cannot read port {port_text!r} in {text!r}; write [HOST:]PORT, e.g. 0.0.0.0:9100"
        ) from None
    if not 0 <= port <= 65535:
        raise ValueError(f"port must be 0-65535 (got {port} in {text!r})")
    return host, port


class _SampleCollector:
    """A prometheus-client collector that turns the newest sample into gauges at scrape time."""

    def __init__(self, exporter: PrometheusExporter) -> None:
        self._exporter = exporter

    def describe(self) -> list[Any]:
        return []

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        names, values = self._exporter.label_names, self._exporter.label_values
        yield from self._exporter.steps.families(names, values)
        sample = self._exporter.latest
        if sample is None:
            return
        for name, help_text, attr, scale in METRICS:
            value = getattr(sample, attr)
            if value is not None:
                family = GaugeMetricFamily(name, help_text, labels=names)
                family.add_metric(values, value * scale)
                yield family
        if sample.cpu_per_core_percent:
            family = GaugeMetricFamily(
                "tfres_cpu_core_utilization_ratio", "One core busy, 0-1.", labels=["core", *names]
            )
            for i, value in enumerate(sample.cpu_per_core_percent):
                family.add_metric([str(i), *values], value * 0.01)
            yield family
        for name, help_text, attr, scale in GPU_METRICS:
            family = GaugeMetricFamily(name, help_text, labels=["gpu", *names])
            for gpu in sample.gpus:
                value = getattr(gpu, attr)
                if value is not None:
                    family.add_metric([str(gpu.index), *values], value * scale)
            if family.samples:
                yield family
        throttled = GaugeMetricFamily(
            "tfres_gpu_throttled",
            "1 while a clock throttle reason is active.",
            labels=["gpu", "reason", *names],
        )
        for gpu in sample.gpus:
            for reason in gpu.throttle_reasons:
                throttled.add_metric([str(gpu.index), reason, *values], 1)
        if throttled.samples:
            yield throttled
        for key, help_text in (
            ("current_bytes", "TensorFlow allocator bytes in use."),
            ("peak_bytes", "TensorFlow allocator peak bytes."),
        ):
            metric = (
                "tfres_tensorflow_memory_bytes"
                if key == "current_bytes"
                else ("tfres_tensorflow_memory_peak_bytes")
            )
            family = GaugeMetricFamily(metric, help_text, labels=["device", *names])
            for device, memory in sample.tf_memory.items():
                if memory.get(key) is not None:
                    family.add_metric([device, *values], memory[key])
            if family.samples:
                yield family


class PrometheusExporter:
    """An HTTP server on ``[HOST:]PORT`` that serves the newest sample as Prometheus gauges.

    Feed it with :meth:`update` (``sampler.add_listener(exporter.update)``); ``url`` is the
    address to scrape. Raises :class:`~tfres.errors.TfresError` when the port is taken.

        exporter = PrometheusExporter("9100", job="resnet", worker=0)
        sampler.add_listener(exporter.update)
    """

    def __init__(
        self, address: str | int, *, job: str | None = None, worker: int | None = None
    ) -> None:
        host, port = parse_address(address)
        from prometheus_client import CollectorRegistry, start_http_server

        self.label_names: list[str] = []
        self.label_values: list[str] = []
        if job is not None:
            self.label_names.append("job")
            self.label_values.append(str(job))
        if worker is not None:
            self.label_names.append("worker")
            self.label_values.append(str(worker))
        self._lock = threading.Lock()
        self._latest: Sample | None = None
        #: step-time and input-wait histograms, once steps are known (:meth:`follow_steps`)
        self.steps = StepHistograms()
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_SampleCollector(self))  # type: ignore[arg-type]
        try:
            self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as err:
            raise TfresError(
                f"cannot serve Prometheus metrics on {host}:{port} ({err.strerror or err}); "
                "pick another with --prometheus [HOST:]PORT"
            ) from err
        self.host = host
        self.port = int(self._server.server_port)
        log.info("tfres: Prometheus metrics at %s", self.url)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    @property
    def latest(self) -> Sample | None:
        with self._lock:
            return self._latest

    def follow_steps(self, source: str | os.PathLike[str] | Sequence[dict[str, Any]]) -> None:
        """Export the steps appended to ``source`` as histograms, read anew at each scrape.

        ``source`` is a steps file (``$TFRES_STEPS_FILE`` of ``tfres run``) or a list
        (``record.steps`` of ``tfres.monitor``).
        """
        if isinstance(source, (str, os.PathLike)):
            self.steps.follow_file(source)
        else:
            self.steps.follow(source)

    def update(self, sample: Sample) -> None:
        """Serve ``sample`` from now on."""
        with self._lock:
            self._latest = sample

    def close(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()
