"""CPU work beside device work: the input side built the recommended way, and how much the
two really overlap.

:func:`input_pipeline` builds a ``tf.data`` pipeline the way the tf.data performance guide
recommends: preprocessing pinned to the CPU, ``map(num_parallel_calls=AUTOTUNE)``,
batching, ``prefetch(AUTOTUNE)``, and a prefetch onto the GPU when there is one, so the host
prepares batch n+1 while the device computes batch n.

:func:`overlap` measures whether that happens: the fraction of a run during which host
preprocessing and device compute are busy *together*.

- **spans** (any machine, the CPU-only way): ``input_pipeline(..., timestamps=True)`` makes
  each element carry the wall-clock start and end of its own preprocessing (``tf.timestamp``
  ops inside the map function, so they mark the real work, on whatever thread ran it), and
  :class:`SpanRecorder` times each training step in the loop. Preprocessing is busy during
  the union of the element spans, compute during the union of the step spans.
- **samples** (a record with GPU samples): the device is busy in a sample interval when any
  GPU's utilization is at least :data:`GPU_BUSY_PERCENT`; the host when the watched
  process uses at least :data:`HOST_BUSY_PERCENT` of a core. Coarser (one sample interval)
  and the host side counts all of the process's CPU, not only preprocessing.

``overlap_fraction`` = time both are busy / the run's time. A sequential pipeline scores
near 0 (the device waits while the host prepares and the other way round); a pipeline that
hides preprocessing behind compute approaches ``min(preprocess, compute) / run``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from tfres.backends.tf_config import tensorflow
from tfres.backends.tf_placement import short_device_name
from tfres.errors import NoGpuError
from tfres.record import Record

__all__ = [
    "GPU_BUSY_PERCENT",
    "HOST_BUSY_PERCENT",
    "OverlapReport",
    "SpanRecorder",
    "input_pipeline",
    "naive_pipeline",
    "overlap",
]

#: A GPU counts as busy in a sample interval from this utilization up (NVML's "kernel
#: running" share); below it the GPU is essentially waiting.
GPU_BUSY_PERCENT = 10.0
#: The host counts as busy when the watched process uses at least half a core.
HOST_BUSY_PERCENT = 50.0

Interval = tuple[float, float]


# -- building the pipeline --------------------------------------------------------------


def _device_target(tf: Any, device: str | None) -> str | None:
    """The GPU to prefetch onto: ``device`` if it names one, the first GPU when ``None``."""
    gpus = [short_device_name(d.name) for d in tf.config.list_logical_devices("GPU")]
    if device is None:
        return gpus[0] if gpus else None
    name = short_device_name(device)
    if name.startswith("CPU"):
        return None
    if name not in gpus:
        seen = ", ".join(gpus) if gpus else "none"
        raise NoGpuError(f"cannot prefetch to {name}: TensorFlow sees no such GPU (GPUs: {seen})")
    return name


def _with_timestamps(tf: Any, preprocess: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*element: Any) -> Any:
        start = tf.timestamp()
        with tf.control_dependencies([start]):
            out = preprocess(*element)
        with tf.control_dependencies(tf.nest.flatten(out)):
            end = tf.timestamp()
        return out, tf.stack([start, end])

    return timed


def input_pipeline(
    source: Any,
    preprocess: Callable[..., Any] | None = None,
    *,
    batch_size: int,
    device: str | None = None,
    shuffle_buffer: int | None = None,
    cache: bool = False,
    drop_remainder: bool = False,
    deterministic: bool | None = None,
    timestamps: bool = False,
) -> Any:
    """The input side of training, built the recommended way; returns a ``tf.data.Dataset``.

    ``source`` is a ``tf.data.Dataset`` or anything ``Dataset.from_tensor_slices`` takes
    (arrays, a tuple or dict of arrays). The steps, all pinned to the CPU: ``cache()`` of
    the source when ``cache`` (cache what is costly to read, before random augmentation),
    ``shuffle(shuffle_buffer)``, ``map(preprocess, num_parallel_calls=AUTOTUNE)``,
    ``batch(batch_size)``, ``prefetch(AUTOTUNE)``; then, when a GPU is the target,
    ``prefetch_to_device`` so the copy to the GPU overlaps compute too. ``device=None``
    picks the first GPU TensorFlow sees and, on a machine without GPU, adds nothing more;
    ``device="CPU:0"`` keeps batches in host memory; a GPU that is not there raises
    :class:`~tfres.errors.NoGpuError`. With ``timestamps=True`` each element is
    ``(batch, spans)`` where ``spans`` (float64, shape ``[n, 2]``) holds the wall-clock start
    and end of each example's preprocessing, for :class:`SpanRecorder` and :func:`overlap`.

        from tfres.placement.pipeline import input_pipeline
        ds = input_pipeline((paths, labels), load_and_augment, batch_size=64)
        model.fit(ds, epochs=5)
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a whole number >= 1 (got {batch_size!r})")
    if preprocess is not None and not callable(preprocess):
        raise ValueError(f"preprocess must be a function (got {type(preprocess).__name__})")
    if shuffle_buffer is not None and (not isinstance(shuffle_buffer, int) or shuffle_buffer < 1):
        raise ValueError(f"shuffle_buffer must be a whole number >= 1 (got {shuffle_buffer!r})")
    if timestamps and preprocess is None:
        raise ValueError("timestamps=True needs a preprocess function to time")
    tf = tensorflow("the input pipeline")
    target = _device_target(tf, device)
    with tf.device("/CPU:0"):
        ds = (
            source
            if isinstance(source, tf.data.Dataset)
            else tf.data.Dataset.from_tensor_slices(source)
        )
        if cache:
            ds = ds.cache()
        if shuffle_buffer:
            ds = ds.shuffle(shuffle_buffer)
        if preprocess is not None:
            fn = _with_timestamps(tf, preprocess) if timestamps else preprocess
            ds = ds.map(fn, num_parallel_calls=tf.data.AUTOTUNE, deterministic=deterministic)
        ds = ds.batch(batch_size, drop_remainder=drop_remainder)
        ds = ds.prefetch(tf.data.AUTOTUNE)
    if target is not None:
        ds = ds.apply(tf.data.experimental.prefetch_to_device("/" + target))
    return ds


def naive_pipeline(
    source: Any,
    preprocess: Callable[..., Any] | None = None,
    *,
    batch_size: int,
    timestamps: bool = False,
) -> Any:
    """The same steps done one after the other: the baseline :func:`input_pipeline` beats.

    A sequential ``map`` and no prefetch, with tf.data's automatic prefetch injection, map
    parallelization and map-and-batch fusion (which runs a batch ahead) turned off: the host
    prepares a batch, then the model computes on it, never both at once (what a Python
    generator or preprocessing inside the training loop gives). For comparisons and
    benchmarks, not for training.

        from tfres.placement.pipeline import naive_pipeline
        slow = naive_pipeline((x, y), augment, batch_size=64)
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a whole number >= 1 (got {batch_size!r})")
    tf = tensorflow("the input pipeline")
    with tf.device("/CPU:0"):
        ds = (
            source
            if isinstance(source, tf.data.Dataset)
            else tf.data.Dataset.from_tensor_slices(source)
        )
        if preprocess is not None:
            ds = ds.map(_with_timestamps(tf, preprocess) if timestamps else preprocess)
        ds = ds.batch(batch_size)
    options = tf.data.Options()
    options.experimental_optimization.inject_prefetch = False
    options.experimental_optimization.map_parallelization = False
    options.experimental_optimization.map_and_batch_fusion = False  # a fused map+batch runs ahead
    return ds.with_options(options)


# -- measuring overlap ------------------------------------------------------------------


def _union(intervals: Sequence[Interval]) -> list[Interval]:
    merged: list[Interval] = []
    for start, end in sorted((float(a), float(b)) for a, b in intervals if b > a):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _clip(intervals: list[Interval], window: Interval) -> list[Interval]:
    lo, hi = window
    return [(max(a, lo), min(b, hi)) for a, b in intervals if min(b, hi) > max(a, lo)]


def _length(intervals: Sequence[Interval]) -> float:
    return sum(b - a for a, b in intervals)


def _intersection(xs: list[Interval], ys: list[Interval]) -> list[Interval]:
    out: list[Interval] = []
    i = j = 0
    while i < len(xs) and j < len(ys):
        start, end = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        if end > start:
            out.append((start, end))
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return out


@dataclass(frozen=True)
class OverlapReport:
    """How much host preprocessing and device compute ran at the same time.

    ``overlap_fraction``: seconds both were busy / ``run_seconds`` (0 to 1).
    ``hidden_fraction``: seconds both were busy / seconds preprocessing was busy, the share
    of preprocessing hidden behind compute (None when nothing was preprocessed).
    ``source`` is ``"spans"`` or ``"samples"`` (see the module docstring).
    """

    source: str
    run_seconds: float
    preprocess_busy_seconds: float
    compute_busy_seconds: float
    both_busy_seconds: float
    overlap_fraction: float
    hidden_fraction: float | None
    compute_busy_fraction: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OverlapReport:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__})


def _report(
    source: str, pre: Sequence[Interval], comp: Sequence[Interval], window: Interval
) -> OverlapReport:
    run = window[1] - window[0]
    if not run > 0:
        raise ValueError(
            f"the run window must have a positive length (got {window[0]} to {window[1]})"
        )
    p = _clip(_union(pre), window)
    c = _clip(_union(comp), window)
    both = _length(_intersection(p, c))
    p_len, c_len = _length(p), _length(c)
    return OverlapReport(
        source=source,
        run_seconds=run,
        preprocess_busy_seconds=p_len,
        compute_busy_seconds=c_len,
        both_busy_seconds=both,
        overlap_fraction=both / run,
        hidden_fraction=both / p_len if p_len > 0 else None,
        compute_busy_fraction=c_len / run,
    )


def _from_samples(samples: Sequence[Any], window: Interval | None) -> OverlapReport:
    pre: list[Interval] = []
    comp: list[Interval] = []
    ordered = sorted(samples, key=lambda s: s.t_seconds)
    for prev, cur in zip(ordered, ordered[1:], strict=False):
        span = (prev.t_seconds, cur.t_seconds)
        utils = [g.util_percent for g in cur.gpus if g.util_percent is not None]
        if utils and max(utils) >= GPU_BUSY_PERCENT:
            comp.append(span)
        if cur.process_cpu_percent is not None and cur.process_cpu_percent >= HOST_BUSY_PERCENT:
            pre.append(span)
    if window is None:
        window = (ordered[0].t_seconds, ordered[-1].t_seconds)
    return _report("samples", pre, comp, window)


def overlap(
    data: Any = None,
    *,
    preprocess_spans: Sequence[Interval] | None = None,
    compute_spans: Sequence[Interval] | None = None,
    window: Interval | None = None,
    phase: str | None = None,
) -> OverlapReport:
    """The fraction of a run during which host preprocessing and device compute were both busy.

    Give the spans directly (``preprocess_spans``/``compute_spans``, seconds on any one
    clock), or ``data``: a :class:`SpanRecorder`, a record (its ``extra["spans"]`` when it
    has them, else its GPU samples), or a list of samples with GPU readings. ``window``
    (start, end) is the run; by default the span from the first to the last activity, or
    the named ``phase`` of a record. Raises ``ValueError`` when there is nothing to measure
    (a record of a CPU-only run without spans, say).

        rec = SpanRecorder()
        ... train, see SpanRecorder ...
        print(overlap(rec).overlap_fraction)
    """
    if preprocess_spans is not None or compute_spans is not None:
        pre, comp = list(preprocess_spans or ()), list(compute_spans or ())
        if window is None:
            every = pre + comp
            if not every:
                raise ValueError("no spans given: nothing to measure")
            window = (min(a for a, _ in every), max(b for _, b in every))
        return _report("spans", pre, comp, window)
    if isinstance(data, SpanRecorder):
        return data.report(window=window)
    if isinstance(data, Record):
        if phase is not None:
            found = [p for p in data.phases if p.name == phase]
            if not found:
                names = ", ".join(p.name for p in data.phases) or "none"
                raise ValueError(f"record {data.id} has no phase {phase!r} (phases: {names})")
            window = (found[0].start_seconds, found[0].end_seconds or data.elapsed_seconds or 0.0)
        spans = data.extra.get("spans") if isinstance(data.extra, dict) else None
        if spans and (spans.get("preprocess") or spans.get("compute")):
            pre = [tuple(s) for s in spans.get("preprocess") or ()]
            comp = [tuple(s) for s in spans.get("compute") or ()]
            return overlap(preprocess_spans=pre, compute_spans=comp, window=window)  # type: ignore[arg-type]
        data = data.samples
    samples = list(data or ())
    if len(samples) < 2 or not any(s.gpus for s in samples):
        raise ValueError(
            "nothing to measure overlap from: no GPU samples and no preprocessing/compute spans; "
            "record spans with input_pipeline(..., timestamps=True) and SpanRecorder"
        )
    return _from_samples(samples, window)


class SpanRecorder:
    """Collects preprocessing spans (from a timestamped pipeline) and training-step spans.

    Use with ``input_pipeline(..., timestamps=True)``: each element is ``(batch, spans)``.
    Times are wall-clock seconds (``time.time``, the clock ``tf.timestamp`` reads). A step
    span ends when the block ends: make the step wait for its result (``float(loss)``) so
    the span covers the device's work.

        rec = SpanRecorder()
        for batch, spans in ds:
            rec.add_preprocess(spans)
            with rec.step():
                float(train_step(*batch))
        rec.report().overlap_fraction
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.preprocess: list[Interval] = []
        self.compute: list[Interval] = []
        self.started_at: float = clock()

    def add_preprocess(self, spans: Any) -> None:
        """Add the ``[n, 2]`` start/end pairs a timestamped pipeline delivered."""
        values = spans.numpy() if hasattr(spans, "numpy") else spans
        for start, end in values.reshape(-1, 2).tolist():
            self.preprocess.append((float(start), float(end)))

    @contextmanager
    def step(self) -> Iterator[None]:
        """Time one training step: ``with rec.step(): float(train_step(x, y))``."""
        start = self._clock()
        try:
            yield
        finally:
            self.compute.append((start, self._clock()))

    def report(self, *, window: Interval | None = None) -> OverlapReport:
        """The :class:`OverlapReport` of what was recorded (window: from start to now)."""
        if window is None:
            every = self.preprocess + self.compute
            if not every:
                raise ValueError("nothing recorded yet: no preprocessing and no step spans")
            window = (min(self.started_at, *(a for a, _ in every)), max(b for _, b in every))
        return overlap(preprocess_spans=self.preprocess, compute_spans=self.compute, window=window)

    def to_extra(self, *, t0: float) -> dict[str, list[list[float]]]:
        """The spans on a record's timeline (seconds since ``t0``, wall clock), for
        ``record.extra["spans"]``, which :func:`overlap` reads back."""
        return {
            "preprocess": [[round(a - t0, 6), round(b - t0, 6)] for a, b in self.preprocess],
            "compute": [[round(a - t0, 6), round(b - t0, 6)] for a, b in self.compute],
        }
