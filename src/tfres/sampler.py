"""The resource sampler: a background thread that reads the host, a process tree, the GPUs
and the TensorFlow allocator every ``interval`` seconds.

    with Sampler(0.1) as s:
        train()
    s.samples  # -> list[Sample]

The loop has the shape ``while not stop.wait(interval): record(read())``; the first sample
is taken at start and the last one at stop. Clock and readers are injectable, so tests call
:meth:`Sampler.sample_once` with a fake clock and never sleep.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tfres.backends.proc import HostReading, ProcessTree, TreeReading, read_host
from tfres.timeline import Mark, Phase, Sample

__all__ = ["Sampler", "DEFAULT_INTERVAL_SECONDS", "MAX_INTERVAL_SECONDS", "check_interval"]

log = logging.getLogger("tfres")

#: 10 Hz: fine enough to see a step stall, cheap enough to leave on (see docs/benchmarks.md).
DEFAULT_INTERVAL_SECONDS = 0.1
#: Above an hour a "timeline" has too few points to be one; such a value is a typo.
MAX_INTERVAL_SECONDS = 3600.0


def check_interval(interval: float) -> float:
    """Return ``interval`` if it is a usable sampling interval, else raise ValueError."""
    if not isinstance(interval, (int, float)) or isinstance(interval, bool):
        raise ValueError(f"interval must be a number of seconds (got {interval!r})")
    if not interval > 0:
        raise ValueError(f"interval must be > 0 seconds (got {interval!r})")
    if interval > MAX_INTERVAL_SECONDS:
        raise ValueError(f"interval must be at most {MAX_INTERVAL_SECONDS:.0f} seconds (got {interval!r})")
    return float(interval)


class Sampler:
    """Sample the host and the process tree of ``pid`` (this process by default).

    On a machine with no NVIDIA driver, samples have ``gpus == ()``.
    """

    def __init__(
        self,
        interval: float = DEFAULT_INTERVAL_SECONDS,
        *,
        pid: int | None = None,
        children: bool = True,
        clock: Callable[[], float] = time.monotonic,
        host_reader: Callable[[], HostReading] = read_host,
        tree_reader: Callable[[], TreeReading] | None = None,
        on_sample: Callable[[Sample], None] | None = None,
    ) -> None:
        self.interval = check_interval(interval)
        self._clock = clock
        self._read_host = host_reader
        self._read_tree = tree_reader or ProcessTree(pid, children=children).read
        self._on_sample = on_sample
        self._samples: list[Sample] = []
        self._marks: list[Mark] = []
        self._phases: list[Phase] = []
        self._notes: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0: float | None = None
        self._prev: tuple[float, HostReading, TreeReading] | None = None

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> Sampler:
        if self._thread is not None:
            raise RuntimeError("this Sampler was already started; make a new one")
        self._t0 = self._clock()
        self.sample_once()
        self._thread = threading.Thread(target=self._loop, name="tfres-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is None or self._stop.is_set():
            return
        self._stop.set()
        self._thread.join()
        self.sample_once()

    def __enter__(self) -> Sampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.sample_once()
            except Exception as err:  # a sampler must never kill the run it watches
                log.warning("tfres sampler: reading failed: %s", err)

    # -- readings ------------------------------------------------------------------------
    def elapsed(self) -> float:
        """Seconds since :meth:`start` on the sampler's clock (0 before start)."""
        return 0.0 if self._t0 is None else self._clock() - self._t0

    def sample_once(self) -> Sample:
        """Take one sample now and keep it."""
        if self._t0 is None:
            self._t0 = self._clock()
        now = self._clock()
        host = self._read_host()
        tree = self._read_tree()
        sample = self._make_sample(now, host, tree)
        with self._lock:
            self._samples.append(sample)
        if self._on_sample is not None:
            self._on_sample(sample)
        return sample

    def _make_sample(self, now: float, host: HostReading, tree: TreeReading) -> Sample:
        prev = self._prev
        self._prev = (now, host, tree)
        rates: dict[str, float | None] = {}
        proc_cpu: float | None = None
        if prev is not None and now > prev[0]:
            dt = now - prev[0]
            ph = prev[1]
            for name, a, b in (
                ("disk_read_bytes_per_second", ph.disk_read_bytes, host.disk_read_bytes),
                ("disk_write_bytes_per_second", ph.disk_write_bytes, host.disk_write_bytes),
                ("net_sent_bytes_per_second", ph.net_sent_bytes, host.net_sent_bytes),
                ("net_recv_bytes_per_second", ph.net_recv_bytes, host.net_recv_bytes),
            ):
                rates[name] = None if a is None or b is None else max(0.0, (b - a) / dt)
            proc_cpu = max(0.0, (tree.cpu_seconds - prev[2].cpu_seconds) / dt * 100.0)
        return Sample(
            t_seconds=round(now - (self._t0 or now), 6),
            cpu_percent=host.cpu_percent,
            cpu_per_core_percent=host.cpu_per_core_percent,
            memory_used_bytes=host.memory_used_bytes,
            memory_available_bytes=host.memory_available_bytes,
            swap_used_bytes=host.swap_used_bytes,
            process_cpu_percent=proc_cpu,
            process_count=len(tree.pids),
            process_threads=tree.threads,
            process_rss_bytes=tree.rss_bytes,
            process_uss_bytes=tree.uss_bytes,
            process_pss_bytes=tree.pss_bytes,
            **rates,  # type: ignore[arg-type]
        )

    # -- marks and phases ----------------------------------------------------------------
    def mark(self, label: str) -> Mark:
        """Put a labelled instant on the timeline."""
        m = Mark(t_seconds=round(self.elapsed(), 6), label=str(label))
        with self._lock:
            self._marks.append(m)
        return m

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Mark a named span of the timeline: ``with s.phase("epoch 1"): ...``."""
        start = self.elapsed()
        try:
            yield
        finally:
            with self._lock:
                self._phases.append(Phase(str(name), round(start, 6), round(self.elapsed(), 6)))

    def note(self, text: str) -> None:
        """Record something that could not be read, in words; it goes into the record."""
        with self._lock:
            if text not in self._notes:
                self._notes.append(text)

    @property
    def samples(self) -> list[Sample]:
        with self._lock:
            return list(self._samples)

    @property
    def marks(self) -> list[Mark]:
        with self._lock:
            return list(self._marks)

    @property
    def phases(self) -> list[Phase]:
        with self._lock:
            return list(self._phases)

    @property
    def notes(self) -> list[str]:
        with self._lock:
            return list(self._notes)
