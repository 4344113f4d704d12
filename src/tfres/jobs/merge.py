"""Multi-worker training watched as one: the workers' records merged, and the straggler found.

Each worker runs under ``tfres run --job NAME --worker N -- python train.py``; its record is
tagged with the job and the worker number. :func:`job_report` puts the records on one
timeline (each record's wall-clock ``started_at`` plus its ``t_seconds``) and finds the
*straggler*: the worker whose steps take longest, and why.

In synchronous training (``MultiWorkerMirroredStrategy``) every worker waits for the slowest
one at each all-reduce, so all workers' full step times are alike: only the time a worker
spends on its *own* work (its input plus its forward/backward pass, before the all-reduce)
tells which one holds the others back. :class:`WorkerStepTimer` records exactly that in
custom training loops; the record's ``steps`` then carry ``duration_seconds`` = own work and
``input_wait_seconds`` = its input part.

    report = job_report(store.records(job="resnet"))
    report.straggler.worker, report.straggler.reasons
"""

from __future__ import annotations

import calendar
import logging
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from tfres.comparison.compare import compare
from tfres.diagnosis.facts import input_wait_fraction, mean, run_facts
from tfres.jobs.worker_timer import WorkerStepTimer
from tfres.record import Record

__all__ = [
    "STRAGGLER_RATIO",
    "WorkerStepTimer",
    "WorkerSummary",
    "Straggler",
    "JobReport",
    "job_report",
    "step_time_text",
]

log = logging.getLogger("tfres")

#: A worker is a straggler when its median own-work step takes at least this many times the
#: median of the other workers' medians: below it, step times of identical workers on a
#: shared machine differ by about as much.
STRAGGLER_RATIO = 1.2
#: Environment differences that are expected between workers and explain nothing.
_EXPECTED_DIFFERENCES = ("TF_CONFIG", "hostname", "host.", "pid")


_STARTED_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?Z?$")


def _wall_start(record: Record) -> tuple[float | None, bool]:
    """``started_at`` as Unix seconds, and whether it had sub-second precision."""
    text = (record.started_at or record.created_at or "").strip()
    match = _STARTED_RE.match(text)
    if not match:
        return None, False
    whole = calendar.timegm(time.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S"))
    fraction = float(match.group(2)) if match.group(2) else 0.0
    return whole + fraction, bool(match.group(2))


def _median(values: Sequence[float | None]) -> float | None:
    vals = [float(v) for v in values if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


@dataclass(frozen=True)
class WorkerSummary:
    """One worker of the job: where it sits on the job's timeline and how its steps went.

    ``offset_seconds``: when it started, after the first worker. Step figures are medians of
    ``record.steps`` (None without steps); ``input_wait_fraction`` = input wait / step time.
    """

    worker: int
    record_id: str
    host: str | None
    status: str
    offset_seconds: float
    elapsed_seconds: float | None
    steps: int
    step_median_seconds: float | None
    input_wait_median_seconds: float | None
    sync_median_seconds: float | None
    input_wait_fraction: float | None
    process_cpu_mean_percent: float | None
    background_cores_mean: float | None
    usable_cores: float | None
    peak_rss_bytes: int | None

    @property
    def compute_median_seconds(self) -> float | None:
        """Median step minus median input wait: the worker's own compute."""
        if self.step_median_seconds is None:
            return None
        return max(0.0, self.step_median_seconds - (self.input_wait_median_seconds or 0.0))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WorkerSummary:
        known: dict[str, Any] = {k: d.get(k) for k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass(frozen=True)
class Straggler:
    """The worker that holds the job back, by how much, and the reasons found."""

    worker: int
    metric: str  # "median step" | "elapsed"
    seconds: float
    others_seconds: float
    ratio: float
    compared_with: int
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["reasons"] = list(self.reasons)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Straggler:
        known: dict[str, Any] = {k: d.get(k) for k in cls.__dataclass_fields__}
        known["reasons"] = tuple(d.get("reasons") or ())
        return cls(**known)


@dataclass(frozen=True)
class JobReport:
    """The workers of one job on one timeline, and the straggler (None when all keep pace).

    ``steps`` and ``samples`` are the workers' steps and samples merged on the job's clock
    (seconds since the first worker started), each tagged with its ``worker``.
    """

    job: str | None
    workers: tuple[WorkerSummary, ...]
    straggler: Straggler | None
    verdict: str
    steps: tuple[dict[str, Any], ...] = ()
    samples: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()

    def worker(self, n: int) -> WorkerSummary:
        for w in self.workers:
            if w.worker == n:
                return w
        raise KeyError(n)

    def to_dict(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "workers": [w.to_dict() for w in self.workers],
            "straggler": self.straggler.to_dict() if self.straggler else None,
            "verdict": self.verdict,
            "steps": [dict(s) for s in self.steps],
            "samples": [dict(s) for s in self.samples],
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> JobReport:
        return cls(
            job=d.get("job"),
            workers=tuple(WorkerSummary.from_dict(w) for w in d.get("workers") or ()),
            straggler=Straggler.from_dict(d["straggler"]) if d.get("straggler") else None,
            verdict=str(d.get("verdict") or ""),
            steps=tuple(d.get("steps") or ()),
            samples=tuple(d.get("samples") or ()),
            notes=tuple(d.get("notes") or ()),
        )


def _pick_workers(records: Sequence[Record], notes: list[str]) -> list[tuple[int, Record]]:
    jobs = sorted({r.job for r in records if r.job})
    if len(jobs) > 1:
        raise ValueError(
            f"the records belong to different jobs ({', '.join(jobs)}); report one job at a time"
        )
    by_worker: dict[int, Record] = {}
    untagged = [r for r in records if r.worker is None]
    for r in sorted((r for r in records if r.worker is not None), key=lambda r: r.created_at):
        if r.worker in by_worker:
            notes.append(
                f"worker {r.worker} has several records; using the latest "
                f"({r.id}, not {by_worker[r.worker].id})"
            )
        by_worker[int(r.worker)] = r  # type: ignore[arg-type]
    for r in untagged:
        n = max(by_worker, default=-1) + 1
        notes.append(f"record {r.id} has no worker number; counted as worker {n}")
        by_worker[n] = r
    return sorted(by_worker.items())


def _summary(n: int, r: Record, offset: float) -> WorkerSummary:
    facts = run_facts(r)
    durations = [s.get("duration_seconds") for s in r.steps]
    rss = [s.process_rss_bytes for s in r.samples if s.process_rss_bytes is not None]
    return WorkerSummary(
        worker=n,
        record_id=r.id,
        host=r.host,
        status=r.status,
        offset_seconds=round(offset, 6),
        elapsed_seconds=r.elapsed_seconds,
        steps=len(r.steps),
        step_median_seconds=_median(durations),
        input_wait_median_seconds=_median([s.get("input_wait_seconds") for s in r.steps]),
        sync_median_seconds=_median([s.get("sync_seconds") for s in r.steps]),
        input_wait_fraction=input_wait_fraction(r.steps),
        process_cpu_mean_percent=mean(s.process_cpu_percent for s in facts.active or r.samples),
        background_cores_mean=facts.background_cores_mean,
        usable_cores=facts.usable_cores,
        peak_rss_bytes=max(rss) if rss else None,
    )


def step_time_text(seconds: float | None) -> str:
    """A step or wait time in words: ``"n/a"``, ``"85 ms"`` under 10 s, else ``"12.3 s"``."""
    return (
        "n/a"
        if seconds is None
        else f"{seconds * 1e3:.0f} ms"
        if seconds < 10
        else f"{seconds:.1f} s"
    )


def _reasons(slow: WorkerSummary, fast: WorkerSummary, slow_r: Record, fast_r: Record) -> list[str]:
    reasons: list[str] = []
    gap = (slow.step_median_seconds or 0.0) - (fast.step_median_seconds or 0.0)
    wait_gap = (slow.input_wait_median_seconds or 0.0) - (fast.input_wait_median_seconds or 0.0)
    if slow.step_median_seconds is not None and gap > 0 and wait_gap >= 0.5 * gap:
        reasons.append(
            f"it waits for input: {step_time_text(slow.input_wait_median_seconds)} of its "
            f"{step_time_text(slow.step_median_seconds)} median step, against "
            f"{step_time_text(fast.input_wait_median_seconds)} of "
            f"{step_time_text(fast.step_median_seconds)} on worker "
            f"{fast.worker}; speed up its input pipeline (parallel map, prefetch, local data)"
        )
    slow_c, fast_c = slow.compute_median_seconds, fast.compute_median_seconds
    if (
        slow_c is not None
        and fast_c is not None
        and fast_c > 0
        and slow_c / fast_c >= STRAGGLER_RATIO
        and slow_c - fast_c >= 0.3 * gap
    ):
        reasons.append(
            f"its own compute takes {step_time_text(slow_c)} a step against "
            f"{step_time_text(fast_c)} on worker "
            f"{fast.worker} ({slow_c / fast_c:.1f}x)"
        )
    if (
        slow.background_cores_mean is not None
        and (slow.background_cores_mean - (fast.background_cores_mean or 0.0)) >= 0.5
    ):
        reasons.append(
            f"other processes took {slow.background_cores_mean:.1f} cores on its host during the "
            f"run (worker {fast.worker}: {fast.background_cores_mean or 0.0:.1f})"
        )
    try:
        comparison = compare(fast_r, slow_r)
    except Exception as err:  # the report must not die with the compare engine
        log.debug("tfres: compare failed for the straggler: %s", err)
        return reasons
    for e in comparison.explanations:
        # an explanation with no cause only says "noise": worth showing when nothing else is
        if e.slower == "B" and (e.causes or not reasons):
            sides = f"A = worker {fast.worker}, B = worker {slow.worker}"
            reasons.append(f"compared with worker {fast.worker} ({sides}): {e.text}")
    changed = [
        f"{item.label}: {item.b} (worker {fast.worker}: {item.a})"
        for item in comparison.changed
        if item.category in ("cpu", "threads", "env", "load", "memory", "gpu")
        and not any(x in item.key or x in item.label for x in _EXPECTED_DIFFERENCES)
    ]
    if changed:
        reasons.append("its environment differs: " + "; ".join(changed[:4]))
    return reasons


def job_report(records: Sequence[Record], *, job: str | None = None) -> JobReport:
    """Merge the records of one job's workers onto one timeline and find the straggler.

    The straggler is the worker whose median step (``record.steps`` ``duration_seconds``:
    with :class:`WorkerStepTimer`, its own work without the all-reduce) is at least
    :data:`STRAGGLER_RATIO` times the median of the others'; without steps, the one whose
    run took longest (``elapsed_seconds``). The reasons come from its steps (input wait
    versus own compute), its samples (background load) and the compare engine (CPU,
    threads, environment) against the fastest worker. A job with one worker has no
    straggler. Raises ``ValueError`` for no records, or records of several jobs.

        report = job_report(store.records(job="resnet"))
        print(report.verdict)
    """
    if not records:
        raise ValueError(
            f"no records for job {job!r}; run each worker with tfres run --job NAME --worker N"
        )
    notes: list[str] = []
    picked = _pick_workers(records, notes)
    job = job or next((r.job for _, r in picked if r.job), None)
    starts = {n: _wall_start(r) for n, r in picked}
    known = [s for s, _ in starts.values() if s is not None]
    first = min(known) if known else 0.0
    if any(s is None for s, _ in starts.values()):
        notes.append("some records have no start time: they are aligned at the job's start")
    if known and not all(precise for _, precise in starts.values()):
        notes.append(
            "start times are recorded to the second: the timeline is aligned to within 1 s"
        )
    offsets: dict[int, float] = {}
    for n, (start, _) in starts.items():
        offsets[n] = start - first if start is not None else 0.0
    workers = tuple(_summary(n, r, offsets[n]) for n, r in picked)
    steps = sorted(
        (
            dict(s, worker=n, t_seconds=round(float(s.get("t_seconds") or 0.0) + offsets[n], 6))
            for n, r in picked
            for s in r.steps
        ),
        key=lambda s: (s["t_seconds"], s["worker"]),
    )
    samples = sorted(
        (
            {
                "t_seconds": round(s.t_seconds + offsets[n], 6),
                "worker": n,
                "cpu_percent": s.cpu_percent,
                "process_cpu_percent": s.process_cpu_percent,
                "process_rss_bytes": s.process_rss_bytes,
            }
            for n, r in picked
            for s in r.samples
        ),
        key=lambda s: (s["t_seconds"], s["worker"]),
    )
    straggler, verdict = _find_straggler(workers, dict(picked), notes)
    return JobReport(job, workers, straggler, verdict, tuple(steps), tuple(samples), tuple(notes))


def _find_straggler(
    workers: Sequence[WorkerSummary], records: dict[int, Record], notes: list[str]
) -> tuple[Straggler | None, str]:
    if len(workers) < 2:
        return None, f"one worker only ({len(workers)} record): nothing to compare it with"
    with_steps = [w for w in workers if w.step_median_seconds is not None]
    if len(with_steps) == len(workers):
        metric, value = "median step", (lambda w: w.step_median_seconds)
    else:
        if with_steps:
            notes.append("not every worker recorded steps: comparing whole-run times instead")
        metric, value = "elapsed", (lambda w: w.elapsed_seconds)
    rated = [w for w in workers if value(w) is not None]
    if len(rated) < 2:
        return None, "the workers recorded neither steps nor run times: no straggler can be named"
    slow = max(rated, key=lambda w: value(w) or 0.0)
    fast = min(rated, key=lambda w: value(w) or 0.0)
    others = statistics.median([value(w) or 0.0 for w in rated if w is not slow])
    ratio = (value(slow) or 0.0) / others if others > 0 else float("inf")
    if ratio < STRAGGLER_RATIO:
        return None, (
            f"no straggler: the slowest worker ({slow.worker}) is within {ratio:.2f}x of the "
            f"others ({metric} {step_time_text(value(slow))} vs {step_time_text(others)})"
        )
    reasons = _reasons(slow, fast, records[slow.worker], records[fast.worker])
    straggler = Straggler(
        worker=slow.worker,
        metric=metric,
        seconds=float(value(slow) or 0.0),
        others_seconds=float(others),
        ratio=round(ratio, 3),
        compared_with=fast.worker,
        reasons=tuple(reasons),
    )
    verdict = (
        f"worker {slow.worker} is the straggler: its {metric} takes {step_time_text(value(slow))}, "
        f"{ratio:.1f}x the others' {step_time_text(others)}"
    )
    if metric == "median step" and slow.sync_median_seconds is not None:
        verdict += "; in synchronous training every worker waits for it at each all-reduce"
    return straggler, verdict
