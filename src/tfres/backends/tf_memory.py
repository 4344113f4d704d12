"""TensorFlow allocator memory of *this* process, read without ever importing TensorFlow.

The sampler calls :meth:`TfMemoryReader.read` 10 times a second: it answers ``None`` until
the program has imported TensorFlow and started its runtime (building a model or making a
tensor starts it), then ``tf.config.experimental.get_memory_info`` for every logical device
(about 1.5 us each). Reading never starts the runtime, so it never makes a later device
setting fail.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from tfres.backends.tf import runtime_started

__all__ = ["TfMemoryReader"]

log = logging.getLogger("tfres")


class TfMemoryReader:
    """Current and peak allocator bytes per logical device, e.g.
    ``{"CPU:0": {"current_bytes": 4194304, "peak_bytes": 8388608}}``.

    ``read()`` is ``None`` while TensorFlow is not imported or its runtime not started. On
    the CPU the figures count TensorFlow tensors only (RSS counts the whole process); on a
    GPU they are the part of ``nvidia-smi``'s ``memory.used`` TensorFlow's allocator holds.
    A device TensorFlow keeps no statistics for is left out, and ``note`` is told why once:
    TensorFlow keeps CPU allocator statistics only when its oneDNN kernels are on, which
    its default leaves off on CPUs without AVX512_VNNI/AVX512_BF16/AVX_VNNI/AMX (an AMD
    EPYC of 2020, most laptops) and on most ARM cores.
    """

    def __init__(self, *, note: Callable[[str], None] | None = None) -> None:
        self._devices: list[str] | None = None
        self._get: Any = None
        self._failed = False
        self._note = note
        #: devices TensorFlow keeps no statistics for: name -> why, in words
        self.unavailable: dict[str, str] = {}

    def _ready(self) -> bool:
        if self._devices is not None:
            return True
        if self._failed:
            return False

        try:
            if not runtime_started():
                return False
            tf = sys.modules["tensorflow"]
            names = [d.name for d in tf.config.list_logical_devices()]
            self._get = tf.config.experimental.get_memory_info
        except Exception as err:  # TF half-imported, or a build without these APIs
            log.debug("TensorFlow allocator memory cannot be read: %s", err)
            self._failed = True
            return False
        self._devices = [n.replace("/device:", "").replace("/physical_device:", "") for n in names]
        return True

    def read(self) -> dict[str, dict[str, int]] | None:
        """One reading, or None before TensorFlow's runtime has started in this process."""
        if not self._ready():
            return None
        out: dict[str, dict[str, int]] = {}
        for name in list(self._devices or ()):
            try:
                info = self._get(name)
            except Exception as err:  # no statistics for this device: stop asking about it
                if self._devices is not None and name in self._devices:
                    self._devices.remove(name)
                self._unavailable(name, err)
                continue
            out[name] = {"current_bytes": int(info["current"]), "peak_bytes": int(info["peak"])}
        return out

    def _unavailable(self, name: str, err: Exception) -> None:
        reason = f"TensorFlow keeps no allocator statistics for {name} on this build/CPU"
        if name.startswith("CPU"):
            from tfres.backends.tf import onednn_setting

            reason += f" (they need oneDNN, which is {onednn_setting()})"
        else:
            reason += f" ({err})"
        self.unavailable[name] = reason
        if self._note is not None:
            self._note(reason)

    def reset_peaks(self) -> None:
        """Start new peaks on every device (``tf.config.experimental.reset_memory_stats``)."""
        if not self._ready():
            return
        tf = sys.modules["tensorflow"]
        for name in list(self._devices or ()):
            try:
                tf.config.experimental.reset_memory_stats(name)
            except Exception as err:
                log.debug("reset_memory_stats(%s) failed: %s", name, err)
