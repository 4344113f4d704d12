"""The batch-size search of :func:`tfres.find_batch_size`, apart from how trials run.

:func:`search` gets each trial from a function of the batch size, so the same logic drives
real trials (one process each) and is tested on its own. At most 8 trials: grow (x8, x16)
while memory hardly moves, then aim with a straight line through the two trials nearest the
limit (peak memory grows about linearly with the batch size), then bisect; an aimed step in
the bracketing phase stays inside the middle half of the interval still open, so every trial
narrows it. It stops when the largest size that fits and the smallest that does not are
within 5% of each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from tfres.errors import TfresError

__all__ = ["Trial", "search", "classify", "MAX_TRIALS", "TOLERANCE", "STATUSES"]

MAX_TRIALS = 8
#: the search stops when the smallest failing size is within this factor of the largest fit
TOLERANCE = 0.05
STATUSES = ("ok", "over-margin", "over-budget", "oom", "error", "timeout")


@dataclass(frozen=True)
class Trial:
    """One batch size tried: ``status`` is ``"ok"`` (fits), ``"over-margin"`` (ran, but its
    peak passed the safety margin), ``"over-budget"`` (the watchdog stopped it), ``"oom"``
    (``ResourceExhaustedError``/``MemoryError`` or killed), ``"error"`` or ``"timeout"``.
    Figures are None where the trial did not get that far."""

    batch_size: int
    status: str
    peak_bytes: int | None = None
    samples_per_second: float | None = None
    seconds: float | None = None
    error: str | None = None
    tf_peak_bytes: int | None = None

    @property
    def fits(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trial:
        kwargs: dict[str, Any] = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**kwargs)


# -- the search (pure: trials come from run_trial) -----------------------------------------
def _aim(points: list[tuple[int, int]], limit: float) -> int | None:
    """The batch size where a line through the two points nearest ``limit`` reaches it."""
    if len(points) < 2:
        return None
    below = [p for p in points if p[1] <= limit]
    above = [p for p in points if p[1] > limit]
    if below and above:
        a, b = max(below), min(above)
    else:
        a, b = sorted(points)[-2:] if not above else sorted(points)[:2]
    if b[0] == a[0] or b[1] <= a[1]:
        return None
    slope = (b[1] - a[1]) / (b[0] - a[0])
    return int(a[0] + (limit - a[1]) / slope)


def classify(trial: Trial, limit_bytes: float) -> Trial:
    """An ``"ok"`` trial whose peak passed ``limit_bytes`` becomes ``"over-margin"``."""
    if trial.status == "ok" and trial.peak_bytes is not None and trial.peak_bytes > limit_bytes:
        return Trial(**{**trial.to_dict(), "status": "over-margin"})
    return trial


def _grow(
    lo: int, points: list[tuple[int, int]], aimed: int | None, limit: float, most: int
) -> int:
    """The next size while every trial so far fitted.

    Memory hardly moves at small sizes (the runtime dominates), so a line through two such
    points is noise: grow x8 (x16 later) until the last step used >= 5% of the headroom,
    then trust the line (aimed 3% low, to land just inside), at most x32 at once and at
    least 5% up, which closes the interval when the last trial landed just inside.
    """
    first_size, first_peak = min(points) if points else (lo, 0)
    last_peak = dict(points).get(lo, first_peak)
    headroom = max(1.0, limit - first_peak)
    progress = (last_peak - first_peak) / headroom
    if aimed is not None and progress >= 0.05:
        size = min(int(first_size + (aimed - first_size) * 0.97), lo * 32)
        size = max(size, int(lo * (1 + TOLERANCE)) + 1)
    else:
        size = lo * (16 if len(points) >= 2 else 8)
    return min(most, max(lo + 1, size))


def search(
    run_trial: Callable[[int], Trial],
    *,
    limit_bytes: float,
    min_batch_size: int = 1,
    max_batch_size: int = 4096,
    start: int = 32,
    max_trials: int = MAX_TRIALS,
) -> tuple[list[Trial], str]:
    """Find the largest batch size whose trial fits; returns (trials, why it stopped).

    ``run_trial(batch_size)`` runs one trial; ``limit_bytes`` is the budget times the margin
    (a trial above it is a failure even if it ran).
    """
    trials: list[Trial] = []
    lo: int | None = None
    hi: int | None = None
    points: list[tuple[int, int]] = []
    size = max(min_batch_size, min(start, max_batch_size))
    while True:
        trial = classify(run_trial(size), limit_bytes)
        trials.append(trial)
        if trial.status == "error" and lo is None:
            raise TfresError(f"the trial at batch size {size} failed: {trial.error}")
        if trial.status in ("ok", "over-margin") and trial.peak_bytes is not None:
            points.append((size, trial.peak_bytes))
        if trial.fits:
            lo = size if lo is None else max(lo, size)
        else:
            hi = size if hi is None else min(hi, size)
        if lo == max_batch_size:
            return trials, f"max_batch_size {max_batch_size} fits"
        if hi == min_batch_size:
            return trials, f"even batch size {min_batch_size} does not fit"
        if lo is not None and hi is not None and (hi - lo <= 1 or hi <= lo * (1 + TOLERANCE)):
            return trials, f"converged: {lo} fits, {hi} does not"
        if len(trials) >= max_trials:
            return trials, f"stopped after {max_trials} trials"
        aimed = _aim(points, limit_bytes)
        if lo is None:  # nothing fits yet: go down
            assert hi is not None
            size = max(min_batch_size, min(aimed or hi // 4, hi // 2))
        elif hi is None:  # nothing failed yet: go up
            size = _grow(lo, points, aimed, limit_bytes, max_batch_size)
        else:
            quarter = max(1, (hi - lo) // 4)
            target = aimed if aimed is not None else (lo + hi) // 2
            size = min(max(target, lo + quarter), hi - quarter)
            size = max(lo + 1, min(size, hi - 1))
