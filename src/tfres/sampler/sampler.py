"""The resource sampler: a background thread that reads the host, a process tree, the GPUs
and the TensorFlow allocator every ``interval`` seconds.

    with Sampler(0.1) as s:
        train()
    s.samples  # -> list[Sample]

The loop keeps a steady beat (``t0 + k * interval``) and the first sample is taken at start,
the last one at stop. GPUs are read on their own thread: a slow or failing NVML never holds
up the host samples. Storage is bounded (:class:`tfres.sampler.retention.BoundedTimeline`): the last
10 minutes at full resolution, min/mean/max buckets before. Clock and readers are
injectable, so tests call :meth:`Sampler.sample_once` with a fake clock and never sleep.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from tfres.backends.host import usable_cores_and_source
from tfres.backends.others import OtherProcesses, ProcessCpu, read_processes
from tfres.backends.proc import HostReader, HostReading, ProcessTree, TreeReading
from tfres.sampler.derive import SampleMaker
from tfres.sampler.gpu_poll import GpuPoller, tf_gpu_map
from tfres.sampler.interval import (
    CPU_EVERY_SECONDS,
    DEFAULT_INTERVAL_SECONDS,
    HOST_MEMORY_EVERY_SECONDS,
    IO_EVERY_SECONDS,
    MAX_INTERVAL_SECONDS,
    OTHERS_EVERY_SECONDS,
    TF_MEMORY_EVERY_SECONDS,
    check_interval,
)
from tfres.sampler.retention import (
    DEFAULT_BUCKET_SECONDS,
    DEFAULT_MAX_BUCKETS,
    DEFAULT_WINDOW_SECONDS,
    BoundedTimeline,
)
from tfres.timeline import Mark, Phase, Sample

__all__ = ["Sampler", "DEFAULT_INTERVAL_SECONDS", "MAX_INTERVAL_SECONDS", "check_interval"]

log = logging.getLogger("tfres")


class Sampler:
    """Sample the host and the process tree of ``pid`` (this process by default).

    - ``gpus``: True reads every GPU NVML sees (the ones ``CUDA_VISIBLE_DEVICES`` leaves, when
      it names them), a list reads those NVML indices, False none. On a machine with no
      NVIDIA driver samples have ``gpus == ()`` and ``extra["gpu_reason"]`` says why.
    - ``tf_memory``: read TensorFlow's allocator (only ever for this process, only once the
      program itself has started TensorFlow; never imports it). None: when ``pid`` is ours.
    - ``full_memory_every``: USS/PSS on every Nth sample; None: about once a second, less
      often where reading them is slow (at most 0.05% of a core). The samples in between
      have ``process_uss_bytes = None``.
    - ``window_seconds``/``bucket_seconds``/``max_buckets``: the storage bound.
    - ``others``: also scan the other processes' CPU (at start, every 10 s or further apart
      when slow, at stop; :class:`tfres.backends.others.OtherProcesses`), so that
      :meth:`top_processes` names the busiest processes outside the tree over the whole
      run. ``others_reader`` replaces the process listing (tests).

    Each counter is read no faster than it is useful. Every sample reads the tree's memory
    (RSS: budgets and peaks need each one) and looks for new processes (one is in the tree
    from the next sample on). CPU percentages, the host's and the tree's, are over spans of
    at least :data:`CPU_EVERY_SECONDS` (0.1 s: the kernel counts CPU in 10 ms ticks),
    carried by the samples inside a span; ``/proc/stat`` is read only when a span ends, and
    the host's memory and swap every :data:`HOST_MEMORY_EVERY_SECONDS` (0.1 s, carried).
    At 10 Hz every sample reads all of these. Disk and network counters are read every
    :data:`IO_EVERY_SECONDS` (1 s; the samples in between have ``*_bytes_per_second``
    None), TensorFlow's allocator every :data:`TF_MEMORY_EVERY_SECONDS` (0.5 s, carried),
    USS/PSS about once a second. What watching costs: docs/benchmarks/overhead.md.

    ``process_cpu_share_percent`` is relative to the cores the tree may use: the cgroup CPU
    quota if one applies, else the CPU affinity; ``extra["cpu_share_of"]`` names which.
    """

    def __init__(
        self,
        interval: float = DEFAULT_INTERVAL_SECONDS,
        *,
        pid: int | None = None,
        children: bool = True,
        clock: Callable[[], float] = time.monotonic,
        host_reader: Callable[[], HostReading] | None = None,
        tree_reader: Callable[[], TreeReading] | None = None,
        on_sample: Callable[[Sample], None] | None = None,
        gpus: bool | Sequence[int] = True,
        gpu_reader: Any = None,
        tf_memory: bool | None = None,
        tf_reader: Callable[[], dict[str, dict[str, int]] | None] | None = None,
        full_memory_every: int | None = None,
        cpu_cores: tuple[float, str] | None = None,
        window_seconds: float = DEFAULT_WINDOW_SECONDS,
        bucket_seconds: float = DEFAULT_BUCKET_SECONDS,
        max_buckets: int = DEFAULT_MAX_BUCKETS,
        others: bool = True,
        others_reader: Callable[[], Iterable[ProcessCpu]] | None = None,
    ) -> None:
        self.interval = check_interval(interval)
        self.pid = os.getpid() if pid is None else int(pid)
        self._clock = clock
        host: HostReader | None = None
        if host_reader is None:
            host = HostReader(
                io_every_seconds=IO_EVERY_SECONDS,
                cpu_every_seconds=CPU_EVERY_SECONDS,
                memory_every_seconds=HOST_MEMORY_EVERY_SECONDS,
                clock=clock,
            )
            host_reader = host.read
        self._read_host = host_reader
        if tree_reader is None:
            tree_reader = ProcessTree(
                self.pid,
                children=children,
                full_memory_every=full_memory_every,
                full_memory_seconds=1.0 if full_memory_every is None else None,
                # the host is read first in each sample: its fork counter says whether
                # anything was created since the previous one
                forks=(lambda: host.forks) if host is not None else None,
            ).read
        self._read_tree = tree_reader
        self._listeners: list[Callable[[Sample], None]] = [on_sample] if on_sample else []
        if tf_memory is None:
            tf_memory = self.pid == os.getpid()
        if tf_reader is None and tf_memory:
            from tfres.backends.tf_memory import TfMemoryReader

            tf_reader = TfMemoryReader(note=self.note).read
        self._read_tf = tf_reader if tf_memory else None
        self._tf_due = float("-inf")  # when the allocator is to be read next
        self._tf_memory: dict[str, dict[str, int]] | None = None
        self._last_sample = False  # stop() sets it: the last sample reads everything
        #: the scan of the other processes' CPU (None with ``others=False``)
        self.others: OtherProcesses | None = None
        if others:
            self.others = OtherProcesses(
                clock=clock,
                reader=others_reader or read_processes,
                every_seconds=OTHERS_EVERY_SECONDS,
            )
        #: every pid seen in the watched tree (left out of the other processes)
        self._tree_pids: set[int] = {self.pid}
        self._gpus_wanted = gpus
        self._gpu_reader = gpu_reader
        self._gpu: GpuPoller | None = None
        self._cpu_cores = cpu_cores
        self._timeline = BoundedTimeline(
            window_seconds=window_seconds, bucket_seconds=bucket_seconds, max_buckets=max_buckets
        )
        self._marks: list[Mark] = []
        self._phases: list[Phase] = []
        self._notes: list[str] = []
        #: facts about how the samples were taken (denominators, GPU reason), for record.extra
        self.extra: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        # held until stop(): the loop waits on it (one futex wait, cheaper than an Event's)
        self._wake = threading.Lock()
        self._wake.acquire()
        self._thread: threading.Thread | None = None
        self._t0: float | None = None
        self._make = SampleMaker(cpu_cores)
        self._prepared = False
        #: CPU seconds the sampling thread itself has used (its own cost)
        self.cpu_seconds = 0.0
        #: samples taken so far (kept or folded into aggregates)
        self.count = 0

    # -- lifecycle -----------------------------------------------------------------------
    def _prepare(self) -> None:
        if self._prepared:
            return
        self._prepared = True
        if self._cpu_cores is None:
            try:
                self._cpu_cores = usable_cores_and_source(self.pid or 0)
            except Exception as err:  # a denominator we cannot read leaves share None
                log.debug("usable CPU cores unknown: %s", err)
        self._make.cpu_cores = self._cpu_cores
        if self._cpu_cores is not None:
            self.extra["cpu_share_of"] = self._cpu_cores[1]
            self.extra["cpu_share_cores"] = self._cpu_cores[0]
        if self._gpus_wanted is not False or self._gpu_reader is not None:
            self._gpu = GpuPoller.open(
                self._gpus_wanted,
                reader=self._gpu_reader,
                interval=self.interval,
                note=self.note,
                clock=self._clock,
            )
            reason = self._gpu.reason
            if reason is not None:
                self.extra["gpu_reason"] = reason
                self._gpu = None  # nothing to read, ever: no call per sample
                if self._gpus_wanted not in (True, False):  # asked for by index: say so
                    self.note(f"GPUs {list(self._gpus_wanted)} not read: {reason}")  # type: ignore[arg-type]
            else:  # TensorFlow's GPU:i is not NVML's GPU i: the rules need the map
                self.extra["tf_gpu_nvml_index"] = tf_gpu_map(self.pid)

    def start(self) -> Sampler:
        """Take the first sample and start the background thread."""
        if self._thread is not None:
            raise RuntimeError("this Sampler was already started; make a new one")
        self._prepare()
        self.sample_once()  # the first sample: t_seconds == 0
        self._scan_others()
        self._thread = threading.Thread(target=self._loop, name="tfres-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and take the last sample; calling it twice does nothing."""
        if self._thread is None or self._stop.is_set():
            return
        self._stop.set()
        self._wake.release()
        self._thread.join()
        self._last_sample = True
        try:
            self.sample_once()
        except Exception as err:
            log.warning("tfres sampler: last reading failed: %s", err)
        self._scan_others()
        if self._gpu is not None:
            self._gpu.close()

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._stop.is_set()

    def __enter__(self) -> Sampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        # the thread's own CPU is read once at the end (not twice a sample: at 100 Hz the
        # two clock reads alone were ~2% of the sampling cost); it counts the waits as well
        started = time.thread_time()
        try:
            self._beat()
        finally:
            self.cpu_seconds += time.thread_time() - started

    def _beat(self) -> None:
        clock, interval, others = self._clock, self.interval, self.others
        deadline = clock() + interval
        while not self._wake.acquire(timeout=max(0.0, deadline - clock())):
            try:
                self.sample_once()
            except Exception as err:  # a sampler must never kill the run it watches
                log.warning("tfres sampler: reading failed: %s", err)
                self.note(f"a reading failed and was skipped: {err}")
            if others is not None and clock() >= others.due_at:
                self._scan_others()
            deadline += interval
            now = clock()
            if deadline < now:  # fell behind (a suspended machine?): skip the missed beats
                deadline = now + interval

    def _scan_others(self) -> None:
        if self.others is None:
            return
        try:
            with self._lock:
                tree = set(self._tree_pids)
            self.others.scan(exclude=tree)
        except Exception as err:  # a listing that fails costs only the names
            log.debug("tfres sampler: scanning the other processes failed: %s", err)

    def top_processes(self, n: int = 5) -> list[dict[str, Any]] | None:
        """The busiest processes outside the watched tree over the run, busiest first.

        ``[{"pid", "name", "cpu_percent"}]`` (100 = one core, averaged from the first scan
        to the last); None when the sampler was made with ``others=False`` or has not been
        started and stopped (it needs two scans). tfres's own process is left out.

            with Sampler(0.1) as s:
                train()
            s.top_processes()  # [{"pid": 812, "name": "chrome", "cpu_percent": 93.0}]
        """
        if self.others is None:
            return None
        with self._lock:
            tree = set(self._tree_pids)
        return self.others.top(n, exclude=tree)

    # -- readings ------------------------------------------------------------------------
    @property
    def t0(self) -> float | None:
        """The start of the timeline on the sampler's clock (``time.monotonic`` by default)."""
        return self._t0

    def elapsed(self) -> float:
        """Seconds since :meth:`start` on the sampler's clock (0 before start)."""
        return 0.0 if self._t0 is None else self._clock() - self._t0

    def add_listener(self, fn: Callable[[Sample], None]) -> None:
        """Call ``fn(sample)`` after every sample (on the sampler thread; keep it quick)."""
        self._listeners.append(fn)

    def sample_once(self) -> Sample:
        """Take one sample now and keep it."""
        if not self._prepared:
            self._prepare()
        now = self._clock()
        if self._t0 is None:
            self._t0 = now
        host = self._read_host()
        tree = self._read_tree()
        # to the microsecond; int() rather than round(x, 6), which formats the float to a
        # string and back (measured: ~3% of the sampling thread's CPU at 100 Hz)
        t = int((now - self._t0) * 1e6 + 0.5) / 1e6
        gpus = self._gpu.read(tree.pids, t) if self._gpu is not None else ()
        tf_memory = self._tf_memory
        if self._read_tf is not None and (now >= self._tf_due or self._last_sample):
            tf_memory = self._tf_now(now)
        sample = self._make.make(now, t, host, tree, gpus, tf_memory)
        with self._lock:
            self._tree_pids.update(tree.pids)
            self._timeline.add(sample)
            self.count += 1
        for fn in self._listeners:
            try:
                fn(sample)
            except Exception as err:  # a listener must not stop the sampling
                log.warning("tfres sampler: listener %r failed: %s", fn, err)
        return sample

    def _tf_now(self, now: float) -> dict[str, dict[str, int]] | None:
        """TensorFlow's allocator, read now: at the first and last sample and every
        :data:`TF_MEMORY_EVERY_SECONDS`; the samples in between carry it."""
        assert self._read_tf is not None
        self._tf_due = now + TF_MEMORY_EVERY_SECONDS
        try:
            self._tf_memory = self._read_tf()
        except Exception as err:
            log.debug("TensorFlow allocator reading failed: %s", err)
        return self._tf_memory

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
            self.add_phase(name, start, self.elapsed())

    def add_phase(self, name: str, start_seconds: float, end_seconds: float | None) -> Phase:
        """Add a span measured elsewhere (a Keras callback's epoch) to the timeline."""
        p = Phase(
            str(name),
            round(start_seconds, 6),
            None if end_seconds is None else round(end_seconds, 6),
        )
        with self._lock:
            self._phases.append(p)
        return p

    def note(self, text: str) -> None:
        """Record something that could not be read, in words; it goes into the record."""
        with self._lock:
            if text not in self._notes:
                self._notes.append(text)

    @property
    def samples(self) -> list[Sample]:
        """The full-resolution samples (the last ``window_seconds`` of a long run)."""
        with self._lock:
            return self._timeline.samples

    @property
    def aggregates(self) -> list[dict[str, Any]]:
        """Min/mean/max buckets of the samples older than the window (see tfres.retention)."""
        with self._lock:
            return self._timeline.aggregates

    @property
    def latest(self) -> Sample | None:
        """The most recent sample, or None before the first."""
        with self._lock:
            return self._timeline.latest

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

    def storage(self) -> dict[str, Any]:
        """How the timeline was stored, for ``record.extra["timeline"]``."""
        with self._lock:
            tl = self._timeline
            return {
                "window_seconds": tl.window_seconds,
                "bucket_seconds": tl.bucket_seconds,
                "max_buckets": tl.max_buckets,
                "samples_taken": self.count,
                "samples_folded": tl.folded,
            }
