"""NVIDIA GPUs through NVML (the official ``nvidia-ml-py`` bindings, module ``pynvml``).

This is the only module in tfres that imports ``pynvml``, and it does so lazily. NVML is
initialised once per process, device handles are cached, and every NVML error is turned
into words a user can act on. A value the GPU does not support (``NVMLError_NotSupported``)
is ``None``; a machine with no NVIDIA driver has no GPUs and a reason, never a crash:

    >>> gpus, reason = gpu_inventory()
    >>> gpus, reason                                     # on a laptop without NVIDIA
    ([], 'NVIDIA driver library not found (libnvidia-ml.so): ...')

Readings are the ones ``nvidia-smi`` shows: ``memory_used_bytes`` is ``memory.used`` (the v2
call, without the driver's reserve), ``power_watts`` is ``power.draw``, ``util_percent`` is
``utilization.gpu`` (the sampler's reader averages the driver's samples:
:mod:`tfres.backends.nvml_reader`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

__all__ = [
    "THROTTLE_REASONS",
    "NvmlUnavailable",
    "explain",
    "gpu_inventory",
    "device_count",
    "driver_versions",
    "pci_bus_id",
    "memory_info",
    "decode_throttle_reasons",
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


class NvmlUnavailable(Exception):
    """NVML cannot be used here; ``str(exc)`` says why in one line."""


_lock = threading.RLock()
_module: Any = None
_initialized = False
_init_reason: str | None = None
_handles: dict[int, Any] = {}
_memory_v2: bool | None = None  # nvmlDeviceGetMemoryInfo_v2: None not tried, False missing


def reset() -> None:
    """Forget NVML: shut it down if it was started and drop cached handles.

    Tests call this after swapping ``sys.modules["pynvml"]``; the next call starts again.
    """
    global _module, _initialized, _init_reason, _memory_v2
    with _lock:
        _memory_v2 = None
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
    except Exception as err:
        # nvidia-ml-py raises NVMLLibraryMismatchError (an Exception, not an NVMLError) for
        # an unversioned function whose newest symbol this driver lacks
        if type(err).__name__ != "NVMLLibraryMismatchError":
            raise
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


def memory_info(nv: Any, handle: Any, errors: list[str] | None = None) -> Any:
    """The GPU's memory as ``nvidia-smi`` shows it: ``total``, ``used`` and ``free`` bytes.

    ``nvmlDeviceGetMemoryInfo`` (v1) counts the driver's own reserve as used (about 600 MiB on
    an H200, seen with driver 580); the v2 call, which ``nvidia-smi`` reads, keeps it apart.
    v2 is asked first; a driver or binding without it gets v1, and is not asked again.
    """
    global _memory_v2
    version = getattr(nv, "nvmlMemory_v2", None)
    if version is not None and _memory_v2 is not False:
        info = _optional(nv, lambda: nv.nvmlDeviceGetMemoryInfo(handle, version=version))
        if info is not None:
            _memory_v2 = True
            return info
    info = _optional(nv, lambda: nv.nvmlDeviceGetMemoryInfo(handle), errors)
    if info is not None and version is not None and _memory_v2 is None:
        _memory_v2 = False  # v1 answers where v2 did not: this driver lacks v2
    return info


def bus_key(bus_id: str) -> str:
    """A PCI bus id in one spelling: NVML writes ``00000000:07:00.0``, CUDA ``0000:07:00.0``."""
    parts = bus_id.strip().split(":")
    if len(parts) != 3:
        return bus_id.strip().lower()
    return f"{int(parts[0], 16):04x}:{parts[1]}:{parts[2]}".lower()


def pci_bus_id(index: int) -> str | None:
    """The PCI bus id of the GPU with NVML index ``index`` (``0000:07:00.0``), or None."""
    nv = _nvml()
    info = _optional(nv, lambda: nv.nvmlDeviceGetPciInfo(_handle(index)))
    bus = getattr(info, "busId", None)
    return None if not bus else bus_key(_text(bus))


def decode_throttle_reasons(bitmask: int | None) -> tuple[str, ...]:
    """Names of the set reason bits, e.g. ``0x24 -> ("sw_power_cap", "sw_thermal_slowdown")``."""
    if not bitmask:
        return ()
    return tuple(name for bit, name in THROTTLE_REASONS if bitmask & bit)


#: the process listings, each as the versions to try (the unversioned name calls ``_v3``)
_PROCESS_GETTERS = (
    ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetComputeRunningProcesses_v2"),
    ("nvmlDeviceGetGraphicsRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses_v2"),
)


def _running_processes(nv: Any, handle: Any) -> list[Any] | None:
    """Compute and graphics processes on a GPU (one entry per pid), or None if unreadable."""
    seen: dict[int, Any] = {}
    readable = False
    for names in _PROCESS_GETTERS:
        procs = None
        for name in names:  # newest first; an older driver lacks the newest symbol
            getter = getattr(nv, name, None)
            if getter is not None:
                procs = _optional(nv, partial(getter, handle))
            if procs is not None:
                break
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
    "pci_bus_id",
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
        memory = memory_info(nv, handle, errors)
        util = _optional(nv, partial(nv.nvmlDeviceGetUtilizationRates, handle), errors)
        cc = _optional(nv, partial(nv.nvmlDeviceGetCudaComputeCapability, handle), errors)
        name = _optional(nv, partial(nv.nvmlDeviceGetName, handle), errors)
        uuid = _optional(nv, partial(nv.nvmlDeviceGetUUID, handle), errors)
        procs = _running_processes(nv, handle)
        gpu: dict[str, Any] = {
            "index": index,
            "pci_bus_id": pci_bus_id(index),
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
