"""NVIDIA GPUs through NVML (the official ``nvidia-ml-py`` bindings, module ``pynvml``).

This is the only module in tfres that imports ``pynvml``, and it does so lazily. NVML is
initialised once per process, device handles are cached, and every NVML error is turned
into words a user can act on. A value the GPU does not support (``NVMLError_NotSupported``)
is ``None``; a machine with no NVIDIA driver has no GPUs and a reason, never a crash:

    >>> gpus, reason = gpu_inventory()
    >>> gpus, reason                                     # on a laptop without NVIDIA
    ([], 'NVIDIA driver library not found (libnvidia-ml.so): ...')

Readings are the ones ``nvidia-smi`` shows: ``util_percent`` is ``utilization.gpu``,
``memory_used_bytes`` is ``memory.used``, ``power_watts`` is ``power.draw``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Collection, Sequence
from functools import partial
from typing import Any, TypeVar

from tfres.timeline import GpuSample

__all__ = [
    "THROTTLE_REASONS",
    "NvmlUnavailable",
    "explain",
    "gpu_inventory",
    "device_count",
    "driver_versions",
    "visible_indices",
    "decode_throttle_reasons",
    "GpuReader",
    "reset",
]

log = logging.getLogger("tfres")
T = TypeVar("T")

#: NVML's clock throttle (since driver 535: "clocks event") reason bits, as documented in
#: nvml.h (``nvmlClocksThrottleReason*``); the names are what tfres records.
THROTTLE_REASONS: tuple[tuple[int, str], ...] = (
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
)

_NVML_TEMPERATURE_GPU = 0
_NVML_CLOCK_SM = 1
_NVML_PCIE_UTIL_TX_BYTES = 0
_NVML_PCIE_UTIL_RX_BYTES = 1


class NvmlUnavailable(Exception):
    """NVML cannot be used here; ``str(exc)`` says why in one line."""


_lock = threading.RLock()
_module: Any = None
_initialized = False
_init_reason: str | None = None
_handles: dict[int, Any] = {}


def reset() -> None:
    """Forget NVML: shut it down if it was started and drop cached handles.

    Tests call this after swapping ``sys.modules["pynvml"]``; the next call starts again.
    """
    global _module, _initialized, _init_reason
    with _lock:
        if _initialized and _module is not None:
            try:
                _module.nvmlShutdown()
            except Exception as err:  # shutting down must never fail a caller
                log.debug("nvmlShutdown failed: %s", err)
        _module = None
        _initialized = False
        _init_reason = None
        _handles.clear()


def _error_name(err: BaseException) -> str:
    return type(err).__name__.replace("NVMLError_", "")


def explain(err: BaseException) -> str:
    """One line that says what an NVML error means and what to do about it."""
    name = _error_name(err)
    if name == "LibraryNotFound":
        return (
            "NVIDIA driver library not found (libnvidia-ml.so): no NVIDIA driver is installed, "
            "or, in a container, the GPU was not passed in (docker run --gpus all)"
        )
    if name == "DriverNotLoaded":
        return (
            "the NVIDIA driver is installed but not loaded (NVML: Driver Not Loaded); "
            "check `nvidia-smi`, then load the kernel module or reboot"
        )
    if name == "NoPermission":
        return (
            "no permission to talk to the NVIDIA driver (NVML: No Permission); check the "
            "permissions of /dev/nvidia* or run inside the container toolkit"
        )
    if name == "LibRmVersionMismatch":
        return (
            "the NVIDIA driver library and kernel module versions differ (NVML: "
            "RM version mismatch), usually after a driver update; reboot"
        )
    if name == "GpuIsLost":
        return "a GPU has fallen off the bus (NVML: GPU is lost); check `dmesg` and reset or reboot"
    if name == "Uninitialized":
        return "NVML was shut down while tfres was reading it (NVML: Uninitialized)"
    return f"NVML error: {err} ({type(err).__name__})"


def _pynvml() -> Any:
    """The pynvml module, imported on first use (``sys.modules`` lets tests swap it)."""
    global _module
    if _module is None:
        try:
            import pynvml
        except ImportError as err:
            raise NvmlUnavailable(
                "nvidia-ml-py is not installed, so GPUs cannot be read; "
                "install with: pip install nvidia-ml-py"
            ) from err
        _module = pynvml
    return _module


def _nvml() -> Any:
    """pynvml, initialised; raises :class:`NvmlUnavailable` with the reason when it cannot be."""
    global _initialized, _init_reason
    with _lock:
        nv = _pynvml()
        if _initialized:
            return nv
        if _init_reason is not None:
            raise NvmlUnavailable(_init_reason)
        try:
            nv.nvmlInit()
        except nv.NVMLError as err:
            _init_reason = explain(err)
            raise NvmlUnavailable(_init_reason) from err
        except OSError as err:  # a broken libnvidia-ml.so
            _init_reason = f"NVIDIA driver library could not be loaded ({err})"
            raise NvmlUnavailable(_init_reason) from err
        _initialized = True
        return nv


def _handle(index: int) -> Any:
    with _lock:
        handle = _handles.get(index)
        if handle is None:
            handle = _nvml().nvmlDeviceGetHandleByIndex(index)
            _handles[index] = handle
        return handle


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _optional(nv: Any, fn: Callable[[], T], errors: list[str] | None = None) -> T | None:
    """``fn()``, or None when the GPU does not support it; other NVML errors are noted."""
    try:
        return fn()
    except nv.NVMLError as err:
        if _error_name(err) not in ("NotSupported", "FunctionNotFound", "NotFound", "NoData"):
            if errors is not None:
                errors.append(explain(err))
        return None
    except (AttributeError, NotImplementedError):  # the bindings lack the function
        return None


def device_count() -> int:
    """How many GPUs NVML sees; raises :class:`NvmlUnavailable` when NVML cannot be used."""
    nv = _nvml()
    try:
        return int(nv.nvmlDeviceGetCount())
    except nv.NVMLError as err:
        raise NvmlUnavailable(explain(err)) from err


def _cuda_version_text(value: int | None) -> str | None:
    if not value:
        return None
    return f"{value // 1000}.{value % 1000 // 10}"


def driver_versions() -> tuple[str | None, str | None]:
    """``(driver_version, cuda_driver_version)``, e.g. ``("550.54.15", "12.4")``.

    The CUDA driver version is the newest CUDA the driver supports (``nvidia-smi``'s "CUDA
    Version"). Raises :class:`NvmlUnavailable` when NVML cannot be used.
    """
    nv = _nvml()
    driver = _optional(nv, lambda: _text(nv.nvmlSystemGetDriverVersion()))

    def cuda() -> int:
        getter = getattr(nv, "nvmlSystemGetCudaDriverVersion_v2", None)
        if getter is None:
            getter = nv.nvmlSystemGetCudaDriverVersion
        return int(getter())

    return driver, _cuda_version_text(_optional(nv, cuda))


def visible_indices(count: int, env: str | None = None) -> list[int]:
    """The NVML indices that ``CUDA_VISIBLE_DEVICES`` leaves visible, in CUDA's order.

    Integers are NVML indices; ``GPU-...`` UUIDs (or unique prefixes) are matched against the
    devices. Like CUDA, the list stops at the first entry that names no device. ``env`` unset
    means all ``count`` devices.
    """
    value = os.environ.get("CUDA_VISIBLE_DEVICES") if env is None else env
    if value is None:
        return list(range(count))
    uuids: dict[int, str] | None = None
    out: list[int] = []
    for item in (part.strip() for part in value.split(",")):
        if not item:
            break
        if item.lstrip("-").isdigit():
            index = int(item)
        else:
            if uuids is None:
                nv = _nvml()
                uuids = {i: _text(nv.nvmlDeviceGetUUID(_handle(i))) for i in range(count)}
            matches = [i for i, u in uuids.items() if u.startswith(item)]
            if len(matches) != 1:
                break
            index = matches[0]
        if not 0 <= index < count or index in out:
            break
        out.append(index)
    return out


def decode_throttle_reasons(bitmask: int | None) -> tuple[str, ...]:
    """Names of the set reason bits, e.g. ``0x24 -> ("sw_power_cap", "sw_thermal_slowdown")``."""
    if not bitmask:
        return ()
    return tuple(name for bit, name in THROTTLE_REASONS if bitmask & bit)


def _running_processes(nv: Any, handle: Any) -> list[Any] | None:
    """Compute and graphics processes on a GPU (one entry per pid), or None if unreadable."""
    seen: dict[int, Any] = {}
    readable = False
    for name in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        getter = getattr(nv, name, None)
        if getter is None:
            continue
        procs = _optional(nv, partial(getter, handle))
        if procs is None:
            continue
        readable = True
        for p in procs:
            if p.pid in seen and getattr(seen[p.pid], "usedGpuMemory", None) is not None:
                continue
            seen[p.pid] = p
    return list(seen.values()) if readable else None


def _mig_enabled(nv: Any, handle: Any) -> bool | None:
    mode = _optional(nv, lambda: nv.nvmlDeviceGetMigMode(handle))
    if mode is None:
        return None
    current = mode[0] if isinstance(mode, (list, tuple)) else mode
    return bool(current)


def _process_name(pid: int) -> str | None:
    import psutil

    try:
        return psutil.Process(pid).name()
    except (psutil.Error, OSError):
        return None


_INVENTORY_KEYS = (
    "index",
    "name",
    "uuid",
    "memory_total_bytes",
    "memory_used_bytes",
    "driver_version",
    "cuda_driver_version",
    "compute_capability",
    "mig_mode",
    "util_percent",
    "processes",
)


def gpu_inventory() -> tuple[list[dict[str, Any]], str | None]:
    """Every GPU NVML sees, as the fingerprint's ``gpus`` section, and why it is empty.

    Each GPU: ``index, name, uuid, memory_total_bytes, memory_used_bytes, driver_version,
    cuda_driver_version, compute_capability ("8.0"), mig_mode (True/False, None when the GPU
    has no MIG), util_percent, processes [{pid, name, used_memory_bytes}]``. With no driver,
    no library or an NVML error the list is empty and the reason says which; a value one GPU
    cannot give is ``None``.
    """
    try:
        nv = _nvml()
        count = device_count()
        driver, cuda_driver = driver_versions()
    except NvmlUnavailable as err:
        return [], str(err)
    if count == 0:
        return [], "NVML works but reports no GPU (nvidia-smi would list none)"
    gpus: list[dict[str, Any]] = []
    for index in range(count):
        try:
            handle = _handle(index)
        except nv.NVMLError as err:
            gpus.append(
                {
                    **dict.fromkeys(_INVENTORY_KEYS),
                    "index": index,
                    "driver_version": driver,
                    "cuda_driver_version": cuda_driver,
                    "error": explain(err),
                }
            )
            continue
        errors: list[str] = []
        memory = _optional(nv, partial(nv.nvmlDeviceGetMemoryInfo, handle), errors)
        util = _optional(nv, partial(nv.nvmlDeviceGetUtilizationRates, handle), errors)
        cc = _optional(nv, partial(nv.nvmlDeviceGetCudaComputeCapability, handle), errors)
        name = _optional(nv, partial(nv.nvmlDeviceGetName, handle), errors)
        uuid = _optional(nv, partial(nv.nvmlDeviceGetUUID, handle), errors)
        procs = _running_processes(nv, handle)
        gpu: dict[str, Any] = {
            "index": index,
            "name": None if name is None else _text(name),
            "uuid": None if uuid is None else _text(uuid),
            "memory_total_bytes": int(memory.total) if memory is not None else None,
            "memory_used_bytes": int(memory.used) if memory is not None else None,
            "driver_version": driver,
            "cuda_driver_version": cuda_driver,
            "compute_capability": f"{cc[0]}.{cc[1]}" if cc is not None else None,
            "mig_mode": _mig_enabled(nv, handle),
            "util_percent": float(util.gpu) if util is not None else None,
            "processes": None
            if procs is None
            else [
                {
                    "pid": int(p.pid),
                    "name": _process_name(int(p.pid)),
                    "used_memory_bytes": None if p.usedGpuMemory is None else int(p.usedGpuMemory),
                }
                for p in procs
            ],
        }
        if errors:
            gpu["error"] = "; ".join(dict.fromkeys(errors))
        gpus.append(gpu)
    return gpus, None


class GpuReader:
    """A fast reader of live GPU values for the sampler: one :class:`GpuSample` per GPU.

    ``indices`` are NVML indices (all GPUs by default; :func:`visible_indices` maps
    ``CUDA_VISIBLE_DEVICES``). On a machine without NVML ``available`` is False, ``reason``
    says why and :meth:`read` returns ``[]``. NVML errors while reading (a GPU lost mid-run)
    never raise: the values become ``None`` and the reason is added to ``notes``.

        reader = GpuReader()
        samples = reader.read(pids={os.getpid()})
    """

    def __init__(self, indices: Sequence[int] | None = None) -> None:
        self.reason: str | None = None
        self.notes: list[str] = []
        self.indices: list[int] = []
        self._mig: dict[int, bool | None] = {}
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
        memory = _optional(nv, lambda: nv.nvmlDeviceGetMemoryInfo(handle), errors)
        power_mw = _optional(nv, lambda: nv.nvmlDeviceGetPowerUsage(handle), errors)
        temperature = _optional(
            nv, lambda: nv.nvmlDeviceGetTemperature(handle, _NVML_TEMPERATURE_GPU), errors
        )
        sm_clock = _optional(nv, lambda: nv.nvmlDeviceGetClockInfo(handle, _NVML_CLOCK_SM), errors)
        reasons_getter = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            nv, "nvmlDeviceGetCurrentClocksThrottleReasons", None
        )
        bitmask = None
        if reasons_getter is not None:
            bitmask = _optional(nv, lambda: reasons_getter(handle), errors)
        rx_kb = _optional(
            nv, lambda: nv.nvmlDeviceGetPcieThroughput(handle, _NVML_PCIE_UTIL_RX_BYTES), errors
        )
        tx_kb = _optional(
            nv, lambda: nv.nvmlDeviceGetPcieThroughput(handle, _NVML_PCIE_UTIL_TX_BYTES), errors
        )
        process_bytes, process_note = self._process_memory(nv, index, handle, pids, errors)
        for text in dict.fromkeys(errors):
            self._note(f"GPU {index}: {text}")
        return GpuSample(
            index=index,
            util_percent=float(util.gpu) if util is not None else None,
            memory_util_percent=float(util.memory) if util is not None else None,
            memory_used_bytes=int(memory.used) if memory is not None else None,
            memory_total_bytes=int(memory.total) if memory is not None else None,
            power_watts=power_mw / 1000.0 if power_mw is not None else None,
            temperature_celsius=float(temperature) if temperature is not None else None,
            sm_clock_mhz=int(sm_clock) if sm_clock is not None else None,
            throttle_reasons=decode_throttle_reasons(bitmask),
            pcie_rx_bytes_per_second=rx_kb * 1024.0 if rx_kb is not None else None,
            pcie_tx_bytes_per_second=tx_kb * 1024.0 if tx_kb is not None else None,
            process_memory_used_bytes=process_bytes,
            process_memory_note=process_note,
        )

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
