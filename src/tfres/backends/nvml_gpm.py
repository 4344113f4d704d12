"""How busy a GPU's engines and SMs were, from its performance monitor (NVML GPM).

NVML's ``utilization.gpu`` says whether *anything* ran in each sampling period, copies
included: on an H200 a program that only copied host to device read 97-100% there, while
its kernels ran 0% of the time (docs/benchmarks/gpu.md). GPUs from Hopper on have a
performance monitor (GPM) that counts the compute engine apart from the copy engines. Its
metrics are computed between two samples, so each reading compares with the previous one:

- ``engine_active_percent``: the share of time the graphics/compute engine was active
  (``NVML_GPM_METRIC_GRAPHICS_UTIL``, DCGM's ``GR_ENGINE_ACTIVE``): kernels only;
- ``sm_active_percent``: the share of SMs busy, over time (``NVML_GPM_METRIC_SM_UTIL``,
  DCGM's ``SM_ACTIVE``): how much of the chip the kernels fill.

GPUs older than Hopper, drivers without GPM and MIG slices give None.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

__all__ = ["GpmReader"]

log = logging.getLogger("tfres")

#: ``NVML_GPM_METRIC_GRAPHICS_UTIL``, ``NVML_GPM_METRIC_SM_UTIL`` (nvml.h)
_METRICS = (1, 2)


class GpmReader:
    """Engine and SM activity of each GPU since the previous reading, where GPM exists.

    ``read`` returns ``(engine_active_percent, sm_active_percent)``; ``(None, None)`` on the
    first reading of a GPU (no previous sample) and where GPM is not available.
    ``unavailable`` says why, per GPU, once it is known. Reading and :meth:`close` may come
    from different threads: a sample is never freed while a reading uses it.
    """

    def __init__(self) -> None:
        self._last: dict[int, Any] = {}
        self.unavailable: dict[int, str] = {}
        self._lock = threading.Lock()
        self._closed = False

    def read(self, nv: Any, index: int, handle: Any) -> tuple[float | None, float | None]:
        with self._lock:
            if self._closed or index in self.unavailable:
                return None, None
            return self._read(nv, index, handle)

    def _read(self, nv: Any, index: int, handle: Any) -> tuple[float | None, float | None]:
        try:
            if index not in self._last and not self._supported(nv, handle):
                self.unavailable[index] = "this GPU has no performance monitor (GPM: Hopper on)"
                return None, None
            sample = nv.nvmlGpmSampleAlloc()
            try:
                nv.nvmlGpmSampleGet(handle, sample)
            except Exception:
                self._free(nv, sample)
                raise
        except Exception as err:  # an NVML error, or bindings without GPM
            self.unavailable[index] = f"GPM could not be read ({type(err).__name__})"
            log.debug("GPU %d: GPM not read: %s", index, err)
            return None, None
        previous, self._last[index] = self._last.get(index), sample
        if previous is None:
            return None, None
        try:
            return self._metrics(nv, previous, sample)
        finally:
            self._free(nv, previous)

    @staticmethod
    def _supported(nv: Any, handle: Any) -> bool:
        return bool(nv.nvmlGpmQueryDeviceSupport(handle).isSupportedDevice)

    @staticmethod
    def _metrics(nv: Any, first: Any, second: Any) -> tuple[float | None, float | None]:
        get = nv.c_nvmlGpmMetricsGet_t()
        get.version = nv.NVML_GPM_METRICS_GET_VERSION
        get.numMetrics = len(_METRICS)
        get.sample1, get.sample2 = first, second
        for i, metric in enumerate(_METRICS):
            get.metrics[i].metricId = metric
        try:
            nv.nvmlGpmMetricsGet(get)
        except Exception as err:
            log.debug("GPM metrics not computed: %s", err)
            return None, None
        engine, sm = (
            float(m.value) if int(m.nvmlReturn) == 0 else None
            for m in (get.metrics[0], get.metrics[1])
        )
        return engine, sm

    @staticmethod
    def _free(nv: Any, sample: Any) -> None:
        try:
            nv.nvmlGpmSampleFree(sample)
        except Exception as err:  # freeing must never fail a reading
            log.debug("GPM sample not freed: %s", err)

    def close(self, nv: Any) -> None:
        """Free the samples kept for the next reading; later readings give None.

        A reading hung in the driver keeps its samples: close never waits more than a second.
        """
        if not self._lock.acquire(timeout=1.0):
            return
        try:
            self._closed = True
            for sample in self._last.values():
                self._free(nv, sample)
            self._last.clear()
        finally:
            self._lock.release()
