"""The sampler's fast reader of live GPU values, one :class:`GpuSample` per GPU (NVML).

Drivers differ in what they offer, and the reader takes each as it is:

- ``nvmlDeviceGetCurrentClocksEventReasons`` exists from driver 535; older drivers answer
  FunctionNotFound and the reader falls back to ``nvmlDeviceGetCurrentClocksThrottleReasons``
  (the same bits under their older name), remembering which one works;
- ``nvmlDeviceGetComputeRunningProcesses`` in nvidia-ml-py calls the ``_v3`` symbol and raises
  ``NVMLLibraryMismatchError`` (not an ``NVMLError``) on drivers without it; the reader then
  asks ``..._v2``, and a GPU whose processes cannot be listed keeps its other readings.

Two readings are taken differently from ``nvidia-smi``, both for reasons measured on an H200
(docs/benchmarks/gpu.md):

- **utilization** is the mean of the driver's utilization samples (one per 200 ms there)
  since the reader last asked (``nvmlDeviceGetSamples``), not only the latest one. A program
  whose steps last about as long as the sampling interval otherwise reads the same part of
  every step: a load busy 44% of the time read 15%, 58% and 91% in three runs through the
  latest sample, 42.7-43.9% through the mean. The call costs 2.4 ms however few samples it
  returns, so it is made at most every 0.25 s and its mean held in between; held for a
  second, the readings lagged the load by about a second (a phase busy 99.5% read 82.9%).
  Where the driver keeps no samples, the latest one it is;
- **PCIe throughput** is read at most once a second: each call blocks for the driver's
  20 ms measurement, two per GPU per reading.

Where the GPU has a performance monitor (Hopper on), engine and SM activity come from it
too (:mod:`tfres.backends.nvml_gpm`): unlike utilization, they leave copies out.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

from tfres.backends.nvml import (
    NvmlUnavailable,
    _handle,
    _mig_enabled,
    _nvml,
    _optional,
    _running_processes,
    decode_throttle_reasons,
    device_count,
    explain,
    memory_info,
)
from tfres.backends.nvml_gpm import GpmReader
from tfres.timeline import GpuSample

__all__ = ["GpuReader"]

log = logging.getLogger("tfres")
T = TypeVar("T")

_NVML_TEMPERATURE_GPU = 0
_NVML_CLOCK_SM = 1
_NVML_PCIE_UTIL_TX_BYTES = 0
_NVML_PCIE_UTIL_RX_BYTES = 1
_NVML_GPU_UTILIZATION_SAMPLES = 1
#: NVML's ``nvmlValueType_t``: which member of a sample's value union holds it
_SAMPLE_FIELDS = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal"}
#: PCIe throughput is read at most this often (each read blocks 20 ms in the driver)
PCIE_EVERY_SECONDS = 1.0
#: the driver's utilization samples are read at most this often (2.4 ms a call on an H200;
#: the driver adds one every 200 ms, so a reading lags the load by under half a second)
UTIL_SAMPLES_EVERY_SECONDS = 0.25
#: the clock-reason getters, newest name first (renamed in driver 535)
_REASON_GETTERS = (
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetCurrentClocksThrottleReasons",
)


class GpuReader:
    """A fast reader of live GPU values for the sampler: one :class:`GpuSample` per GPU.

    ``indices`` are NVML indices (all GPUs by default; :func:`visible_indices` maps
    ``CUDA_VISIBLE_DEVICES``). On a machine without NVML ``available`` is False, ``reason``
    says why and :meth:`read` returns ``[]``. NVML errors while reading (a GPU lost mid-run)
    never raise: the values become ``None`` and the reason is added to ``notes``.

        reader = GpuReader()
        samples = reader.read(pids={os.getpid()})
    """

    def __init__(
        self, indices: Sequence[int] | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.reason: str | None = None
        self.notes: list[str] = []
        self.indices: list[int] = []
        self._mig: dict[int, bool | None] = {}
        self._reason_getters = list(_REASON_GETTERS)
        self._clock = clock
        #: per GPU: the newest driver utilization sample seen (µs); absent before the first
        self._util_seen: dict[int, int] = {}
        #: per GPU: (when asked, the mean of the samples then, or None)
        self._util_mean: dict[int, tuple[float, float | None]] = {}
        self._util_samples = True  # False once the driver says it keeps none
        #: per GPU: (when read, (rx KB/s, tx KB/s))
        self._pcie: dict[int, tuple[float, tuple[int | None, int | None]]] = {}
        self._gpm = GpmReader()
        try:
            count = device_count()
        except NvmlUnavailable as err:
            self.reason = str(err)
            return
        wanted = list(range(count)) if indices is None else list(indices)
        missing = [i for i in wanted if not 0 <= i < count]
        if missing:
            self.notes.append(f"GPU index {missing} not present (NVML sees {count} GPUs)")
        self.indices = [i for i in wanted if 0 <= i < count]
        if not self.indices and self.reason is None:
            self.reason = "NVML works but reports no GPU" if count == 0 else "no such GPU"

    @property
    def available(self) -> bool:
        return bool(self.indices)

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)
            log.warning("tfres GPU reading: %s", text)

    def read(self, pids: Collection[int] = ()) -> list[GpuSample]:
        """One reading of every GPU; ``pids`` are the watched processes (for their memory)."""
        if not self.indices:
            return []
        try:
            nv = _nvml()
        except NvmlUnavailable as err:
            self._note(str(err))
            return [GpuSample(index=i) for i in self.indices]
        return [self._read_one(nv, index, pids) for index in self.indices]

    def _read_one(self, nv: Any, index: int, pids: Collection[int]) -> GpuSample:
        errors: list[str] = []
        try:
            handle = _handle(index)
        except nv.NVMLError as err:
            self._note(f"GPU {index}: {explain(err)}")
            return GpuSample(index=index)
        util = _optional(nv, lambda: nv.nvmlDeviceGetUtilizationRates(handle), errors)
        util_mean = self._utilization_since(nv, index, handle)
        memory = memory_info(nv, handle, errors)
        power_mw = _optional(nv, lambda: nv.nvmlDeviceGetPowerUsage(handle), errors)
        temperature = _optional(
            nv, lambda: nv.nvmlDeviceGetTemperature(handle, _NVML_TEMPERATURE_GPU), errors
        )
        sm_clock = _optional(nv, lambda: nv.nvmlDeviceGetClockInfo(handle, _NVML_CLOCK_SM), errors)
        bitmask = self._clock_reasons(nv, handle, errors)
        rx_kb, tx_kb = self._pcie_throughput(nv, index, handle, errors)
        engine, sm = self._gpm.read(nv, index, handle)
        process_bytes, process_note = self._process_memory(nv, index, handle, pids, errors)
        for text in dict.fromkeys(errors):
            self._note(f"GPU {index}: {text}")
        return GpuSample(
            index=index,
            util_percent=util_mean
            if util_mean is not None
            else (float(util.gpu) if util is not None else None),
            memory_util_percent=float(util.memory) if util is not None else None,
            memory_used_bytes=int(memory.used) if memory is not None else None,
            memory_total_bytes=int(memory.total) if memory is not None else None,
            power_watts=power_mw / 1000.0 if power_mw is not None else None,
            temperature_celsius=float(temperature) if temperature is not None else None,
            sm_clock_mhz=int(sm_clock) if sm_clock is not None else None,
            throttle_reasons=decode_throttle_reasons(bitmask),
            pcie_rx_bytes_per_second=rx_kb * 1024.0 if rx_kb is not None else None,
            pcie_tx_bytes_per_second=tx_kb * 1024.0 if tx_kb is not None else None,
            engine_active_percent=engine,
            sm_active_percent=sm,
            process_memory_used_bytes=process_bytes,
            process_memory_note=process_note,
        )

    def close(self) -> None:
        """Free what the reader keeps between readings (GPM samples)."""
        try:
            self._gpm.close(_nvml())
        except NvmlUnavailable:
            pass

    def _utilization_since(self, nv: Any, index: int, handle: Any) -> float | None:
        """The mean of the driver's utilization samples since it was last asked, or None.

        Asked at most once per :data:`UTIL_SAMPLES_EVERY_SECONDS`; the mean is held in
        between. None on the first reading (the driver's buffer reaches back before the run),
        when no sample is new, and on drivers that keep none; the caller takes the latest.
        """
        getter = getattr(nv, "nvmlDeviceGetSamples", None)
        if getter is None or not self._util_samples:
            return None
        return self._held(
            self._util_mean,
            index,
            UTIL_SAMPLES_EVERY_SECONDS,
            lambda: self._samples_mean(nv, getter, index, handle),
        )

    def _samples_mean(self, nv: Any, getter: Any, index: int, handle: Any) -> float | None:
        seen = self._util_seen.get(index)
        try:
            kind, samples = getter(handle, _NVML_GPU_UTILIZATION_SAMPLES, seen or 0)
        except nv.NVMLError as err:
            if type(err).__name__ in ("NVMLError_NotSupported", "NVMLError_FunctionNotFound"):
                self._util_samples = False
            return None  # NotFound: no sample since the last reading
        field = _SAMPLE_FIELDS.get(int(kind), "uiVal")
        new = [
            (int(s.timeStamp), float(getattr(s.sampleValue, field)))
            for s in samples
            if seen is None or int(s.timeStamp) > seen
        ]
        if not new:
            return None
        self._util_seen[index] = max(t for t, _ in new)
        if seen is None:
            return None
        return statistics.fmean(v for _, v in new)

    def _pcie_throughput(
        self, nv: Any, index: int, handle: Any, errors: list[str]
    ) -> tuple[int | None, int | None]:
        """(rx, tx) in KB/s, read again only when the last reading is a second old."""

        def counter(which: int) -> int | None:
            return _optional(nv, lambda: nv.nvmlDeviceGetPcieThroughput(handle, which), errors)

        return self._held(
            self._pcie,
            index,
            PCIE_EVERY_SECONDS,
            lambda: (counter(_NVML_PCIE_UTIL_RX_BYTES), counter(_NVML_PCIE_UTIL_TX_BYTES)),
        )

    def _held(
        self, store: dict[int, tuple[float, T]], index: int, every: float, read: Callable[[], T]
    ) -> T:
        """``read()`` for GPU ``index``, at most once per ``every`` seconds; in between, the
        value ``store`` holds from the last time."""
        now = self._clock()
        last = store.get(index)
        if last is not None and now - last[0] < every:
            return last[1]
        value = read()
        store[index] = (now, value)
        return value

    def _clock_reasons(self, nv: Any, handle: Any, errors: list[str]) -> int | None:
        """The clock event (throttle) reason bits, from whichever getter this driver has."""
        for name in self._reason_getters:
            getter = getattr(nv, name, None)
            if getter is None:
                continue
            try:
                return int(getter(handle))
            except nv.NVMLError as err:
                if type(err).__name__ != "NVMLError_FunctionNotFound":
                    if type(err).__name__ != "NVMLError_NotSupported":
                        errors.append(explain(err))
                    return None
            # FunctionNotFound: a driver older than this name; never ask it again
            self._reason_getters = [n for n in self._reason_getters if n != name]
        return None

    def _process_memory(
        self, nv: Any, index: int, handle: Any, pids: Collection[int], errors: list[str]
    ) -> tuple[int | None, str | None]:
        if index not in self._mig:
            self._mig[index] = _mig_enabled(nv, handle)
        if self._mig[index]:
            return None, "MIG is enabled on this GPU: NVML does not report per-process memory"
        try:
            procs = _running_processes(nv, handle)
        except Exception as err:  # pragma: no cover - _running_processes already guards NVML
            errors.append(str(err))
            procs = None
        if procs is None:
            return None, "NVML cannot list the processes on this GPU"
        watched = set(pids)
        mine = [p for p in procs if int(p.pid) in watched]
        if not mine:
            if procs and not any(_pid_visible(int(p.pid)) for p in procs):
                return None, (
                    "the processes on this GPU are in another PID namespace (a container): "
                    "their memory cannot be matched to the watched processes"
                )
            return 0, None
        if any(p.usedGpuMemory is None for p in mine):
            return None, "the driver does not report per-process GPU memory (Windows WDDM?)"
        return sum(int(p.usedGpuMemory) for p in mine), None


def _pid_visible(pid: int) -> bool:
    import psutil

    try:
        return psutil.pid_exists(pid)
    except (OSError, psutil.Error):
        return False
