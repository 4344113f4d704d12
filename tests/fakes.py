"""Fakes for the hardware boundary only: a fake clock and a fake NVML.

``FakeNVML`` stands in for the ``pynvml`` module (nvidia-ml-py) on machines without an
NVIDIA GPU. It answers the NVML functions tfres calls from scripted per-GPU values and
raises the REAL error classes of the real ``pynvml`` module, so the code under test handles
exactly what it would handle on a GPU machine. Use it through the ``fake_nvml`` fixture
(tests/conftest.py), which installs it as ``sys.modules["pynvml"]`` and resets tfres's NVML
state:

    def test_x(fake_nvml):
        fake_nvml.gpus = [FakeGpu(util_percent=[10, 90]), FakeGpu(name="NVIDIA T4")]
        fake_nvml.fail_from(5, pynvml.NVMLError_GpuIsLost)   # NVML breaks mid-run
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pynvml as real_pynvml

GiB = 1024**3


class FakeClock:
    """A monotonic clock the test moves by hand: ``clock.advance(0.1)``."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


Scripted = Any  # a value, or a list of values taken one per call (the last one repeats)


@dataclass
class FakeGpu:
    """Scripted values of one fake GPU. A list is read one element per call, then the last
    element repeats. ``None`` for ``mig_mode`` means the GPU has no MIG (NotSupported);
    a function name in ``not_supported`` raises ``NVMLError_NotSupported``."""

    name: str = "NVIDIA A100-SXM4-40GB"
    uuid: str = "GPU-11111111-2222-3333-4444-555555555555"
    memory_total_bytes: int = 40 * GiB
    memory_used_bytes: Scripted = 2 * GiB
    #: what the driver keeps for itself: counted as used by ``nvmlDeviceGetMemoryInfo`` (v1),
    #: apart from it by the v2 call that nvidia-smi reads
    memory_reserved_bytes: int = 0
    util_percent: Scripted = 35
    memory_util_percent: Scripted = 20
    power_milliwatts: Scripted = 120_000
    temperature_celsius: Scripted = 55
    sm_clock_mhz: Scripted = 1410
    throttle_bitmask: Scripted = 0
    pcie_rx_kilobytes_per_second: Scripted = 2048
    pcie_tx_kilobytes_per_second: Scripted = 1024
    #: the driver's utilization samples, one list of (timestamp µs, percent) per call of
    #: ``nvmlDeviceGetSamples`` (filtered by its timestamp argument); None: NotSupported
    utilization_samples: Scripted = None
    #: the performance monitor's metrics (GPM, Hopper on), one value per metrics call;
    #: None: a GPU without GPM (``isSupportedDevice`` 0)
    engine_active_percent: Scripted = None
    sm_active_percent: Scripted = 0.0
    compute_capability: tuple[int, int] = (8, 0)
    #: the PCI bus id NVML reports (``nvmlDeviceGetPciInfo().busId``); None: one from the index
    pci_bus_id: str | None = None
    mig_mode: bool | None = False
    #: (pid, used GPU memory in bytes or None) of the compute processes on this GPU
    processes: Sequence[tuple[int, int | None]] = ()
    not_supported: set[str] = field(default_factory=set)


class _Handle:
    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"<FakeNVML handle {self.index}>"


class FakeNVML:
    """A module-like stand-in for ``pynvml`` with scripted GPUs (see the module docstring).

    - ``gpus``: the fake GPUs (one A100-like GPU by default; ``[]`` for none)
    - ``init_error``: an NVML error class ``nvmlInit`` raises (``NVMLError_LibraryNotFound``,
      ``NVMLError_DriverNotLoaded``, ...)
    - ``fail_from(n, error)``: every NVML call from the n-th on (counting from 1, all
      functions but ``nvmlInit``/``nvmlShutdown``) raises ``error``
    - ``calls``: the names of the functions called, in order
    - ``missing``: NVML symbols this driver lacks, as an old driver does: calling one raises
      ``NVMLError_FunctionNotFound``, and an unversioned ``...RunningProcesses`` whose ``_v3``
      symbol is missing raises ``NVMLLibraryMismatchError``, exactly as nvidia-ml-py does
      (``_nvmlGetFunctionPointer``, ``@throwOnVersionMismatch``); e.g. a driver older than 535:
      ``{"nvmlDeviceGetCurrentClocksEventReasons"}``
    Constants and error classes not defined here come from the real pynvml module.
    """

    def __init__(
        self,
        gpus: Sequence[FakeGpu] | None = None,
        *,
        driver_version: str = "550.54.15",
        cuda_driver_version: int = 12040,
        init_error: type[BaseException] | None = None,
    ) -> None:
        self.gpus: list[FakeGpu] = list(gpus) if gpus is not None else [FakeGpu()]
        self.driver_version = driver_version
        self.cuda_driver_version = cuda_driver_version
        self.init_error = init_error
        self.calls: list[str] = []
        self.initialized = False
        self.init_count = 0
        self.shutdown_count = 0
        self._fail_from: int | None = None
        self._fail_error: type[BaseException] = real_pynvml.NVMLError_Unknown
        self._reads: dict[tuple[int, str], int] = {}
        self.missing: set[str] = set()
        #: GPM samples allocated and not yet freed: fake address -> GPU index (None: empty)
        self.gpm_samples: dict[int, int | None] = {}
        self._gpm_next = 0x1000

    # -- scripting ---------------------------------------------------------------------
    def fail_from(
        self, n: int, error: type[BaseException] = real_pynvml.NVMLError_GpuIsLost
    ) -> None:
        """Make the n-th NVML call and every later one raise ``error``."""
        self._fail_from = n
        self._fail_error = error

    def fail_now(self, error: type[BaseException] = real_pynvml.NVMLError_GpuIsLost) -> None:
        """Make every NVML call from now on raise ``error``."""
        self.fail_from(len(self.calls) + 1, error)

    def heal(self) -> None:
        """Stop failing."""
        self._fail_from = None

    # -- module-like behaviour ---------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        # constants (NVML_*, nvmlClocks*Reason*) and error classes come from the real module;
        # an NVML function this fake does not script is missing, like in old bindings.
        if name.startswith(("NVML", "nvmlClocks", "c_nvml")) or name in (
            "NVMLError",
            "nvmlMemory_v2",
        ):
            return getattr(real_pynvml, name)
        raise AttributeError(f"FakeNVML does not provide {name}")

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if not self.initialized:
            raise real_pynvml.NVMLError_Uninitialized()
        if self._fail_from is not None and len(self.calls) >= self._fail_from:
            raise self._fail_error()

    def _gpu(self, handle: _Handle, name: str) -> FakeGpu:
        self._call(name)
        if name in self.missing:  # the driver library lacks this symbol
            raise real_pynvml.NVMLError_FunctionNotFound()
        gpu = self.gpus[handle.index]
        if name in gpu.not_supported:
            raise real_pynvml.NVMLError_NotSupported()
        return gpu

    def _next(self, handle: _Handle, attr: str) -> Any:
        value = getattr(self.gpus[handle.index], attr)
        if isinstance(value, (list, tuple)):
            key = (handle.index, attr)
            i = self._reads.get(key, 0)
            self._reads[key] = i + 1
            return value[min(i, len(value) - 1)]
        return value

    # -- NVML functions ----------------------------------------------------------------
    def nvmlInit(self) -> None:
        self.init_count += 1
        if self.init_error is not None:
            raise self.init_error()
        self.initialized = True

    def nvmlShutdown(self) -> None:
        self.shutdown_count += 1
        self.initialized = False

    def nvmlSystemGetDriverVersion(self) -> str:
        self._call("nvmlSystemGetDriverVersion")
        return self.driver_version

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        self._call("nvmlSystemGetCudaDriverVersion")
        return self.cuda_driver_version

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        self._call("nvmlSystemGetCudaDriverVersion_v2")
        return self.cuda_driver_version

    def nvmlDeviceGetCount(self) -> int:
        self._call("nvmlDeviceGetCount")
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> _Handle:
        self._call("nvmlDeviceGetHandleByIndex")
        if not 0 <= index < len(self.gpus):
            raise real_pynvml.NVMLError_InvalidArgument()
        return _Handle(index)

    def nvmlDeviceGetName(self, handle: _Handle) -> str:
        return self._gpu(handle, "nvmlDeviceGetName").name

    def nvmlDeviceGetUUID(self, handle: _Handle) -> str:
        return self._gpu(handle, "nvmlDeviceGetUUID").uuid

    def nvmlDeviceGetMemoryInfo(self, handle: _Handle, version: int | None = None) -> Any:
        # nvidia-ml-py: a version calls the _v2 symbol, whose `used` leaves the reserve out
        gpu = self._gpu(
            handle, "nvmlDeviceGetMemoryInfo_v2" if version else "nvmlDeviceGetMemoryInfo"
        )
        used = int(self._next(handle, "memory_used_bytes"))
        total, reserved = gpu.memory_total_bytes, gpu.memory_reserved_bytes
        if version:
            return SimpleNamespace(
                total=total, reserved=reserved, used=used, free=total - used - reserved
            )
        return SimpleNamespace(total=total, used=used + reserved, free=total - used - reserved)

    # -- the performance monitor (GPM); samples are real ctypes pointers to fake addresses ---
    def nvmlGpmQueryDeviceSupport(self, handle: _Handle) -> Any:
        gpu = self._gpu(handle, "nvmlGpmQueryDeviceSupport")
        return SimpleNamespace(isSupportedDevice=int(gpu.engine_active_percent is not None))

    def nvmlGpmSampleAlloc(self) -> Any:
        self._call("nvmlGpmSampleAlloc")
        self._gpm_next += 0x10
        self.gpm_samples[self._gpm_next] = None
        return ctypes.cast(ctypes.c_void_p(self._gpm_next), real_pynvml.c_nvmlGpmSample_t)

    def nvmlGpmSampleGet(self, handle: _Handle, sample: Any) -> Any:
        self._gpu(handle, "nvmlGpmSampleGet")
        self.gpm_samples[self._address(sample)] = handle.index
        return sample

    def nvmlGpmSampleFree(self, sample: Any) -> None:
        self._call("nvmlGpmSampleFree")
        del self.gpm_samples[self._address(sample)]  # a double free raises, as it would crash

    def nvmlGpmMetricsGet(self, get: Any) -> Any:
        self._call("nvmlGpmMetricsGet")
        first, second = (self.gpm_samples[self._address(s)] for s in (get.sample1, get.sample2))
        assert first is not None and first == second, "GPM samples of two GPUs compared"
        handle = _Handle(first)
        values = {
            real_pynvml.NVML_GPM_METRIC_GRAPHICS_UTIL: self._next(handle, "engine_active_percent"),
            real_pynvml.NVML_GPM_METRIC_SM_UTIL: self._next(handle, "sm_active_percent"),
        }
        for i in range(get.numMetrics):
            get.metrics[i].value = values[get.metrics[i].metricId]
            get.metrics[i].nvmlReturn = 0
        return get

    @staticmethod
    def _address(sample: Any) -> int:
        return int(ctypes.cast(sample, ctypes.c_void_p).value or 0)

    def nvmlDeviceGetSamples(self, handle: _Handle, sampling_type: int, since_us: int) -> Any:
        gpu = self._gpu(handle, "nvmlDeviceGetSamples")
        if gpu.utilization_samples is None:
            raise real_pynvml.NVMLError_NotSupported()
        assert sampling_type == real_pynvml.NVML_GPU_UTILIZATION_SAMPLES
        new = [(t, v) for t, v in self._next(handle, "utilization_samples") if t > since_us]
        if not new:
            raise real_pynvml.NVMLError_NotFound()
        value = real_pynvml.c_nvmlValue_t
        samples = [SimpleNamespace(timeStamp=t, sampleValue=value(uiVal=v)) for t, v in new]
        return real_pynvml.NVML_VALUE_TYPE_UNSIGNED_INT, samples

    def nvmlDeviceGetUtilizationRates(self, handle: _Handle) -> Any:
        self._gpu(handle, "nvmlDeviceGetUtilizationRates")
        return SimpleNamespace(
            gpu=self._next(handle, "util_percent"), memory=self._next(handle, "memory_util_percent")
        )

    def nvmlDeviceGetCudaComputeCapability(self, handle: _Handle) -> tuple[int, int]:
        return self._gpu(handle, "nvmlDeviceGetCudaComputeCapability").compute_capability

    def nvmlDeviceGetMigMode(self, handle: _Handle) -> list[int]:
        gpu = self._gpu(handle, "nvmlDeviceGetMigMode")
        if gpu.mig_mode is None:
            raise real_pynvml.NVMLError_NotSupported()
        mode = int(gpu.mig_mode)
        return [mode, mode]

    def _processes(self, handle: _Handle, name: str) -> list[Any]:
        gpu = self._gpu(handle, name)
        return [
            SimpleNamespace(pid=pid, usedGpuMemory=used, gpuInstanceId=None, computeInstanceId=None)
            for pid, used in gpu.processes
        ]

    def nvmlDeviceGetComputeRunningProcesses(self, handle: _Handle) -> list[Any]:
        # nvidia-ml-py: the unversioned name calls _v3 under @throwOnVersionMismatch
        if "nvmlDeviceGetComputeRunningProcesses_v3" in self.missing:
            self._call("nvmlDeviceGetComputeRunningProcesses")
            raise real_pynvml.NVMLLibraryMismatchError(
                "Unversioned function called and the pyNVML version does not match the NVML "
                "lib version."
            )
        return self._processes(handle, "nvmlDeviceGetComputeRunningProcesses")

    def nvmlDeviceGetComputeRunningProcesses_v2(self, handle: _Handle) -> list[Any]:
        return self._processes(handle, "nvmlDeviceGetComputeRunningProcesses_v2")

    def nvmlDeviceGetPciInfo(self, handle: _Handle) -> Any:
        gpu = self._gpu(handle, "nvmlDeviceGetPciInfo")
        bus = gpu.pci_bus_id or f"00000000:{handle.index + 1:02X}:00.0"
        return SimpleNamespace(busId=bus.encode(), busIdLegacy=bus[4:].encode())

    def nvmlDeviceGetGraphicsRunningProcesses(self, handle: _Handle) -> list[Any]:
        self._gpu(handle, "nvmlDeviceGetGraphicsRunningProcesses")
        return []

    def nvmlDeviceGetPowerUsage(self, handle: _Handle) -> int:
        self._gpu(handle, "nvmlDeviceGetPowerUsage")
        return int(self._next(handle, "power_milliwatts"))

    def nvmlDeviceGetTemperature(self, handle: _Handle, sensor: int) -> int:
        self._gpu(handle, "nvmlDeviceGetTemperature")
        if sensor != real_pynvml.NVML_TEMPERATURE_GPU:
            raise real_pynvml.NVMLError_InvalidArgument()
        return int(self._next(handle, "temperature_celsius"))

    def nvmlDeviceGetClockInfo(self, handle: _Handle, clock_type: int) -> int:
        self._gpu(handle, "nvmlDeviceGetClockInfo")
        if clock_type != real_pynvml.NVML_CLOCK_SM:
            raise real_pynvml.NVMLError_NotSupported()
        return int(self._next(handle, "sm_clock_mhz"))

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: _Handle) -> int:
        self._gpu(handle, "nvmlDeviceGetCurrentClocksEventReasons")
        return int(self._next(handle, "throttle_bitmask"))

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: _Handle) -> int:
        self._gpu(handle, "nvmlDeviceGetCurrentClocksThrottleReasons")
        return int(self._next(handle, "throttle_bitmask"))

    def nvmlDeviceGetPcieThroughput(self, handle: _Handle, counter: int) -> int:
        self._gpu(handle, "nvmlDeviceGetPcieThroughput")
        if counter == real_pynvml.NVML_PCIE_UTIL_RX_BYTES:
            return int(self._next(handle, "pcie_rx_kilobytes_per_second"))
        if counter == real_pynvml.NVML_PCIE_UTIL_TX_BYTES:
            return int(self._next(handle, "pcie_tx_kilobytes_per_second"))
        raise real_pynvml.NVMLError_InvalidArgument()
