"""GPU readings for the sampler, taken on a thread of their own.

NVML calls can be slow (``nvmlDeviceGetPcieThroughput`` samples for ~20 ms per GPU) or hang
(a GPU falling off the bus). The sampler asks :class:`GpuPoller` for a reading; it waits a
short time for a fresh one and otherwise carries on with the latest it has (at most a second
old), so host samples keep their beat whatever NVML does. When NVML fails on three readings
in a row the GPU columns stop and a note says when and why; the run goes on.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from tfres.errors import NoGpuError
from tfres.timeline import GpuSample

__all__ = [
    "GpuPoller",
    "check_gpu_indices",
    "visible_gpu_indices",
    "tf_gpu_map",
    "process_environ",
]

log = logging.getLogger("tfres")

#: consecutive failed readings after which the GPU columns stop
FAILURES_TO_STOP = 3
#: GPUs are read at most about ten times a second, however short the sampling interval:
#: NVML's counters refresh every 1/6 to 1 s (utilization samples every 200 ms on an H200),
#: so faster readings repeat themselves, and one reading costs 1.75 ms of CPU there
#: (docs/benchmarks/gpu.md); faster samples carry the latest reading
GPU_MIN_INTERVAL_SECONDS = 0.09


def visible_gpu_indices(cuda_visible_devices: str | None) -> list[int] | None:
    """The NVML indices ``CUDA_VISIBLE_DEVICES`` leaves visible; None (all) when unset.

    Its integers are CUDA ordinals (``CUDA_DEVICE_ORDER``), mapped to NVML through PCI bus ids.
    """
    if cuda_visible_devices is None:
        return None
    try:
        from tfres.backends import nvml
        from tfres.backends.cuda_order import visible_indices

        return visible_indices(nvml.device_count(), cuda_visible_devices)
    except Exception as err:  # no NVML: the reader will say why
        log.debug("CUDA_VISIBLE_DEVICES not mapped to NVML indices: %s", err)
        return None


def check_gpu_indices(indices: Sequence[int]) -> None:
    """Raise :class:`~tfres.errors.NoGpuError` when NVML works and has no GPU at one of
    ``indices``. Without NVML nothing is raised: the record's notes say why no GPU was read,
    and a script that passes ``--gpus 0`` on every machine still runs where there is none."""
    try:
        from tfres.backends import nvml

        count = nvml.device_count()
    except Exception as err:  # no NVML here: the reader will say why
        log.debug("GPU indices not checked: %s", err)
        return
    missing = [i for i in indices if not 0 <= i < count]
    if missing:
        have = f"NVML sees {count} GPU{'s' if count != 1 else ''}" + (
            f" (index 0-{count - 1})" if count else ""
        )
        raise NoGpuError(f"no GPU with index {missing[0]} here: {have}; nvidia-smi -L lists them")


def process_environ(pid: int) -> dict[str, str]:
    """The environment ``pid`` started with (``/proc/PID/environ``); ours when unreadable."""
    if pid == os.getpid():
        return dict(os.environ)
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            items = fh.read().split(b"\0")
    except OSError:
        return dict(os.environ)
    pairs = (item.decode(errors="replace").partition("=") for item in items if b"=" in item)
    return {name: value for name, _, value in pairs}


def tf_gpu_map(pid: int) -> dict[str, int] | None:
    """``{"GPU:0": nvml_index, ...}``: which NVML GPU each of TensorFlow's GPUs is, for the
    process ``pid`` (its ``CUDA_VISIBLE_DEVICES`` and ``CUDA_DEVICE_ORDER``); None without NVML.
    """
    try:
        from tfres.backends.cuda_order import tf_gpu_indices

        return {f"GPU:{i}": index for i, index in enumerate(tf_gpu_indices(process_environ(pid)))}
    except Exception as err:  # no NVML: nothing to map
        log.debug("TensorFlow GPUs not mapped to NVML indices: %s", err)
        return None


_Call = tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]


class _DaemonWorker:
    """One daemon thread that runs submitted calls in turn; a hung call never blocks exit."""

    def __init__(self, name: str) -> None:
        self._queue: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, fn, args = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as err:  # handed to the caller through the future
                future.set_exception(err)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self._queue.put((future, fn, args))
        return future

    def shutdown(self) -> None:
        self._queue.put(None)


def _failed(result: Sequence[GpuSample]) -> bool:
    return bool(result) and all(
        g.util_percent is None and g.memory_used_bytes is None for g in result
    )


class GpuPoller:
    """Hands the sampler GPU readings without ever blocking it for long.

    ``reader`` has ``read(pids) -> list[GpuSample]``
    (:class:`tfres.backends.nvml_reader.GpuReader`); ``reason`` is why there is none (no
    driver, no GPU), in words.
    """

    def __init__(
        self,
        reader: Any,
        *,
        reason: str | None = None,
        interval: float = 0.1,
        note: Callable[[str], None] = lambda text: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._reader = reader
        self.reason = reason
        self._note = note
        self._clock = clock
        self.wait_seconds = min(0.25, 0.5 * interval)
        self.max_age_seconds = max(1.0, 3 * interval)
        self._pool: _DaemonWorker | None = None
        self._future: Future[list[GpuSample]] | None = None
        self._submitted_at = 0.0
        self._last: tuple[GpuSample, ...] = ()
        self._last_at: float | None = None
        self._failures = 0
        self._notes_seen = 0
        self._slow_noted = False
        #: readings that took longer than ``wait_seconds`` (the latest one was used instead)
        self.late = 0

    @classmethod
    def open(
        cls,
        wanted: bool | Sequence[int],
        *,
        reader: Any = None,
        interval: float = 0.1,
        note: Callable[[str], None] = lambda text: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> GpuPoller:
        """A poller for the GPUs ``wanted`` (True: those CUDA_VISIBLE_DEVICES leaves)."""
        reason: str | None = None
        if reader is None:
            visible = os.environ.get("CUDA_VISIBLE_DEVICES")
            if wanted is True:
                indices = visible_gpu_indices(visible)
            else:
                indices = [int(i) for i in wanted]  # type: ignore[union-attr]
            if wanted is True and indices == []:
                reason = f"CUDA_VISIBLE_DEVICES={visible!r} leaves the command no GPU"
            else:
                try:
                    from tfres.backends.nvml_reader import GpuReader

                    reader = GpuReader(indices)
                except Exception as err:  # the GPU backend itself is unusable here
                    reason = f"GPUs cannot be read: {err}"
                    reader = None
        if reader is not None and not getattr(reader, "available", True):
            reason = getattr(reader, "reason", None) or "no GPU to read"
            reader = None
        return cls(reader, reason=reason, interval=interval, note=note, clock=clock)

    @property
    def active(self) -> bool:
        """Whether GPUs are still being read."""
        return self._reader is not None

    def _stop_reading(self, t_seconds: float, why: str) -> None:
        self._note(f"GPU readings stopped at {t_seconds:.1f} s: {why}; the run went on")
        log.warning("tfres: GPU readings stopped: %s", why)
        self._reader = None
        self._last = ()

    def _forward_notes(self) -> list[str]:
        notes = list(getattr(self._reader, "notes", None) or [])
        new = notes[self._notes_seen :]
        self._notes_seen = len(notes)
        for text in new:
            self._note(text)
        return new

    def read(self, pids: Collection[int], t_seconds: float) -> tuple[GpuSample, ...]:
        """The GPUs now, or the latest reading when NVML is slow; ``()`` when there is none."""
        if self._reader is None:
            return ()
        if self._pool is None:
            self._pool = _DaemonWorker("tfres-nvml")
        now = self._clock()
        if self._future is None:
            if self._last and now - self._submitted_at < GPU_MIN_INTERVAL_SECONDS:
                return self._last  # read less than GPU_MIN_INTERVAL_SECONDS ago
            self._future = self._pool.submit(self._reader.read, tuple(pids))
            self._submitted_at = now
        try:
            result = self._future.result(timeout=self.wait_seconds)
        except FutureTimeout:
            self.late += 1
            if not self._slow_noted and now - self._submitted_at > 10.0:
                self._slow_noted = True
                self._note(f"NVML hung for 10 s (at {t_seconds:.1f} s); GPU columns paused")
            if self._last_at is not None and now - self._last_at <= self.max_age_seconds:
                return self._last
            return ()
        except Exception as err:
            self._future = None
            self._failures += 1
            if self._failures >= FAILURES_TO_STOP:
                self._stop_reading(t_seconds, f"NVML failed ({err})")
            return ()
        self._future = None
        new_notes = self._forward_notes()
        if _failed(result):
            self._failures += 1
            if self._failures >= FAILURES_TO_STOP:
                why = new_notes[-1] if new_notes else "NVML gave no values"
                self._stop_reading(t_seconds, why)
                return ()
        else:
            self._failures = 0
        self._last = tuple(result)
        self._last_at = now
        return self._last

    def close(self) -> None:
        """Stop the reading thread (without waiting for a hung NVML call)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        closer = getattr(self._reader, "close", None)
        if callable(closer):
            try:
                closer()
            except Exception as err:
                log.debug("GPU reader close failed: %s", err)
