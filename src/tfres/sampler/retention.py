"""Bounded storage of a timeline, so a sampler can run for days in fixed memory.

The bound (also in docs/timeline-storage.md):

- the most recent ``window_seconds`` (default 10 minutes) keep every sample: 6,001 samples
  at 10 Hz;
- anything older is folded into buckets of ``bucket_seconds`` (default 10 s) that keep the
  count and the min, mean and max of every numeric column (:func:`tfres.sampler.columns.flatten`
  without per-core CPU and text);
- when there are more than ``max_buckets`` (default 8,640: a day of 10 s buckets), neighbour
  buckets merge in pairs and the bucket width doubles (20 s, 40 s, ...).

So however long a run is, memory holds at most ``window_seconds / interval + 1`` samples and
``max_buckets`` buckets. A bucket is a dict::

    {"start_seconds": 600.0, "end_seconds": 610.0, "count": 100,
     "min": {"cpu_percent": 3.0, ...}, "mean": {...}, "max": {...}}
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from tfres.sampler.columns import flatten
from tfres.timeline import Sample

__all__ = [
    "BoundedTimeline",
    "DEFAULT_WINDOW_SECONDS",
    "DEFAULT_BUCKET_SECONDS",
    "DEFAULT_MAX_BUCKETS",
]

DEFAULT_WINDOW_SECONDS = 600.0
DEFAULT_BUCKET_SECONDS = 10.0
DEFAULT_MAX_BUCKETS = 8640


def _mean_value(name: str, value: float) -> float | int:
    """Means of byte counts are whole bytes; the rest keep 3 decimals."""
    return int(round(value)) if name.endswith("_bytes") else round(value, 3)


def _summarize(samples: list[Sample], start: float, width: float) -> dict[str, Any]:
    columns: dict[str, list[float]] = {}
    for sample in samples:
        for name, value in flatten(sample, per_core=False, text=False).items():
            if value is not None and name != "t_seconds":
                columns.setdefault(name, []).append(value)
    lo: dict[str, Any] = {}
    mean: dict[str, Any] = {}
    hi: dict[str, Any] = {}
    for name, values in columns.items():
        lo[name] = min(values)
        hi[name] = max(values)
        mean[name] = _mean_value(name, math.fsum(values) / len(values))
    return {
        "start_seconds": round(start, 6),
        "end_seconds": round(start + width, 6),
        "count": len(samples),
        "min": lo,
        "mean": mean,
        "max": hi,
    }


def _merge(a: dict[str, Any], b: dict[str, Any], start: float, width: float) -> dict[str, Any]:
    na, nb = a["count"], b["count"]
    lo = dict(a["min"])
    hi = dict(a["max"])
    mean = dict(a["mean"])
    for name, value in b["min"].items():
        lo[name] = min(lo[name], value) if name in lo else value
    for name, value in b["max"].items():
        hi[name] = max(hi[name], value) if name in hi else value
    for name, value in b["mean"].items():
        if name in mean:
            mean[name] = _mean_value(name, (mean[name] * na + value * nb) / (na + nb))
        else:
            mean[name] = value
    return {
        "start_seconds": round(start, 6),
        "end_seconds": round(start + width, 6),
        "count": na + nb,
        "min": lo,
        "mean": mean,
        "max": hi,
    }


class BoundedTimeline:
    """Samples at full resolution for the recent window, min/mean/max buckets before it.

    Samples must be added in time order (``t_seconds`` never decreasing).
    """

    def __init__(
        self,
        *,
        window_seconds: float = DEFAULT_WINDOW_SECONDS,
        bucket_seconds: float = DEFAULT_BUCKET_SECONDS,
        max_buckets: int = DEFAULT_MAX_BUCKETS,
    ) -> None:
        if not window_seconds > 0:
            raise ValueError(f"window_seconds must be > 0 (got {window_seconds!r})")
        if not bucket_seconds > 0:
            raise ValueError(f"bucket_seconds must be > 0 (got {bucket_seconds!r})")
        if max_buckets < 2:
            raise ValueError(f"max_buckets must be at least 2 (got {max_buckets!r})")
        self.window_seconds = float(window_seconds)
        self.bucket_seconds = float(bucket_seconds)
        self.max_buckets = int(max_buckets)
        self._recent: deque[Sample] = deque()
        self._buckets: list[dict[str, Any]] = []
        self._pending: list[Sample] = []
        self._pending_key: int | None = None
        #: how many samples were folded into buckets
        self.folded = 0

    def __len__(self) -> int:
        return len(self._recent)

    def add(self, sample: Sample) -> None:
        """Keep ``sample``; samples older than the window move into buckets."""
        recent = self._recent
        recent.append(sample)
        oldest_kept = sample.t_seconds - self.window_seconds
        while recent[0].t_seconds < oldest_kept:
            self._fold(recent.popleft())

    def _fold(self, sample: Sample) -> None:
        self.folded += 1
        key = int(sample.t_seconds // self.bucket_seconds)
        if key != self._pending_key:
            self._close_pending()  # may widen the buckets: key again
            key = int(sample.t_seconds // self.bucket_seconds)
            self._pending_key = key
        self._pending.append(sample)

    def _close_pending(self) -> None:
        if not self._pending or self._pending_key is None:
            return
        width = self.bucket_seconds
        start = self._pending_key * width
        bucket = _summarize(self._pending, start, width)
        self._pending = []
        last = self._buckets[-1] if self._buckets else None
        if last is not None and abs(last["start_seconds"] - round(start, 6)) < 1e-6:
            self._buckets[-1] = _merge(last, bucket, start, width)  # the bucket widened under it
            return
        self._buckets.append(bucket)
        if len(self._buckets) > self.max_buckets:
            self._halve()

    def _halve(self) -> None:
        """Merge neighbour buckets in pairs; the width doubles."""
        width = self.bucket_seconds * 2
        merged: list[dict[str, Any]] = []
        for bucket in self._buckets:
            key = int(round(bucket["start_seconds"], 6) // width)
            if merged and int(round(merged[-1]["start_seconds"], 6) // width) == key:
                merged[-1] = _merge(merged[-1], bucket, key * width, width)
            else:
                bucket = dict(bucket, start_seconds=round(key * width, 6))
                bucket["end_seconds"] = round(key * width + width, 6)
                merged.append(bucket)
        self._buckets = merged
        self.bucket_seconds = width
        if self._pending_key is not None:
            self._pending_key = None  # the open bucket re-keys on the next fold
            pending, self._pending = self._pending, []
            for sample in pending:
                self.folded -= 1
                self._fold(sample)

    @property
    def samples(self) -> list[Sample]:
        """The full-resolution samples of the recent window, oldest first."""
        return list(self._recent)

    @property
    def latest(self) -> Sample | None:
        return self._recent[-1] if self._recent else None

    @property
    def aggregates(self) -> list[dict[str, Any]]:
        """The buckets before the window, oldest first (the open one included)."""
        out = list(self._buckets)
        if self._pending and self._pending_key is not None:
            width = self.bucket_seconds
            start = self._pending_key * width
            bucket = _summarize(self._pending, start, width)
            if out and abs(out[-1]["start_seconds"] - round(start, 6)) < 1e-6:
                out[-1] = _merge(out[-1], bucket, start, width)
            else:
                out.append(bucket)
        return out
