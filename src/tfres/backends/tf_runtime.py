"""TensorFlow's running device state: the devices a workload may use and the allocator's
memory figures. Unlike :mod:`tfres.backends.tf`, these functions may start the TensorFlow
runtime (once started, device settings can no longer change); ``tfres bench`` uses them.

    reset_memory_peak("CPU:0"); train(); memory_info("CPU:0")["peak_bytes"]
"""

from __future__ import annotations

import logging

from tfres.backends.tf import load_tensorflow

__all__ = ["gpu_devices", "memory_info", "reset_memory_peak"]

log = logging.getLogger("tfres")


def gpu_devices() -> list[str]:
    """The GPUs TensorFlow can use, as device names (``["GPU:0", "GPU:1"]``).

    Empty on a CPU build of TensorFlow or a machine without a usable NVIDIA driver.
    Reads ``tf.config.list_physical_devices("GPU")``, which does not start the runtime.
    """
    tf = load_tensorflow()
    names = []
    for i, _ in enumerate(tf.config.list_physical_devices("GPU")):
        names.append(f"GPU:{i}")
    return names


def reset_memory_peak(device: str) -> None:
    """Start a new peak for ``device``'s allocator (``tf.config.experimental.reset_memory_stats``).

    Does nothing where TensorFlow keeps no statistics for the device.
    """
    tf = load_tensorflow()
    try:
        tf.config.experimental.reset_memory_stats(device)
    except (ValueError, RuntimeError, AttributeError) as err:
        log.debug("reset_memory_stats(%s) failed: %s", device, err)


def memory_info(device: str) -> dict[str, int] | None:
    """The allocator's current and peak bytes on ``device``: ``{"current_bytes", "peak_bytes"}``.

    On the CPU this counts TensorFlow tensors only, not the whole process (see RSS for that),
    and only allocations above about 256 KiB (TensorFlow 2.21): small models read 0;
    on a GPU it is what TensorFlow's allocator holds, the part of ``nvidia-smi``'s
    ``memory.used`` that TensorFlow hands out. None where TensorFlow cannot tell.
    """
    tf = load_tensorflow()
    try:
        info = tf.config.experimental.get_memory_info(device)
    except (ValueError, RuntimeError, AttributeError) as err:
        log.debug("get_memory_info(%s) failed: %s", device, err)
        return None
    return {"current_bytes": int(info["current"]), "peak_bytes": int(info["peak"])}
