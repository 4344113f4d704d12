"""``tfres compare``: why two runs, or two machines, differ, in plain words with numbers.

``compare(a, b)`` puts two records side by side:

- the environment diff (:mod:`tfres.comparison.environment`), ordered by likely impact, unchanged
  items folded away;
- per-workload ratios (time, throughput) and resource patterns (mean/p95 CPU, GPU
  utilization, peak memory) for the workloads both records ran, naming those only one has;
  for ``tfres run`` records, the same figures for the whole run;
- the explanation: each difference above :data:`LARGE_RATIO` linked to the environment
  differences that account for it, with the evidence: "cpu_matmul n=2000 is 3.1x slower on
  B: B's BLAS runs 1 thread (OMP_NUM_THREADS=1) against 2 on A ...".

Ratios are B over A: a ``time_ratio`` of 2.0 means B took twice as long.

    c = tfres.compare(tfres.load_record("a.json"), tfres.load_record("b.json"))
    for e in c.explanations:
        print(e.text)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from tfres.comparison.environment import EnvItem, environment_diff
from tfres.comparison.explanation import Explanation, explain
from tfres.comparison.patterns import LARGE_RATIO, Pattern, WorkloadDiff, pattern
from tfres.diagnosis.facts import RunFacts, percentile, run_facts
from tfres.record import Record

__all__ = [
    "Comparison",
    "RunRef",
    "Pattern",
    "WorkloadDiff",
    "Explanation",
    "compare",
    "LARGE_RATIO",
]


@dataclass(frozen=True)
class RunRef:
    """Which record a side of the comparison is."""

    id: str
    kind: str
    label: str | None
    host: str | None
    created_at: str
    tfres_version: str
    status: str

    @classmethod
    def of(cls, r: Record) -> RunRef:
        return cls(r.id, r.kind, r.label, r.host, r.created_at, r.tfres_version, r.status)

    @property
    def name(self) -> str:
        return self.label or self.id


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare`; ``to_dict()`` is what ``tfres compare --json`` prints."""

    a: RunRef
    b: RunRef
    environment: tuple[EnvItem, ...]
    workloads: tuple[WorkloadDiff, ...]
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]
    run: WorkloadDiff | None
    explanations: tuple[Explanation, ...]
    #: what one record lacks that the other has (older tfres, missing sections), in words
    notes: tuple[str, ...]

    @property
    def changed(self) -> list[EnvItem]:
        """The environment items that differ, most impactful first."""
        return [item for item in self.environment if item.changed]

    @property
    def unchanged(self) -> list[EnvItem]:
        return [item for item in self.environment if not item.changed and not item.missing]

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": asdict(self.a),
            "b": asdict(self.b),
            "environment": [item.to_dict() for item in self.environment],
            "workloads": [w.to_dict() for w in self.workloads],
            "only_in_a": list(self.only_in_a),
            "only_in_b": list(self.only_in_b),
            "run": self.run.to_dict() if self.run else None,
            "explanations": [e.to_dict() for e in self.explanations],
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Comparison:
        return cls(
            a=RunRef(**d["a"]),
            b=RunRef(**d["b"]),
            environment=tuple(EnvItem.from_dict(x) for x in d.get("environment") or []),
            workloads=tuple(WorkloadDiff.from_dict(x) for x in d.get("workloads") or []),
            only_in_a=tuple(d.get("only_in_a") or ()),
            only_in_b=tuple(d.get("only_in_b") or ()),
            run=WorkloadDiff.from_dict(d["run"]) if d.get("run") else None,
            explanations=tuple(Explanation.from_dict(x) for x in d.get("explanations") or []),
            notes=tuple(d.get("notes") or ()),
        )


def _key(w: dict[str, Any]) -> tuple[str, str, str]:
    return (
        str(w.get("name")),
        str(w.get("device")),
        json.dumps(w.get("params") or {}, sort_keys=True, default=str),
    )


def _label(w: dict[str, Any]) -> str:
    variant = (w.get("details") or {}).get("variant")
    return " ".join(str(x) for x in (w.get("name"), variant, f"on {w.get('device')}") if x)


def _workload_pattern(facts: RunFacts, w: dict[str, Any]) -> Pattern:
    start, end = w.get("start_seconds"), w.get("end_seconds")
    span = (
        (float(start), float(end))
        if isinstance(start, (int, float)) and isinstance(end, (int, float))
        else None
    )
    return pattern(
        facts, span, seconds=w.get("seconds_median"), throughput=w.get("throughput"), fallback=w
    )


def _workload_diffs(fa: RunFacts, fb: RunFacts) -> tuple[list[WorkloadDiff], list[str], list[str]]:
    a_rows = {_key(w): w for w in fa.record.workloads if not w.get("error")}
    b_rows = {_key(w): w for w in fb.record.workloads if not w.get("error")}
    diffs: list[WorkloadDiff] = []
    # pair exact matches first, then the same workload and device with other parameters
    pairs = [(k, k) for k in a_rows if k in b_rows]
    left_a = [k for k in a_rows if k not in b_rows]
    left_b = [k for k in b_rows if k not in a_rows]
    for ka in list(left_a):
        kb = next((k for k in left_b if k[:2] == ka[:2]), None)
        if kb is not None:
            pairs.append((ka, kb))
            left_a.remove(ka)
            left_b.remove(kb)
    for ka, kb in pairs:
        wa, wb = a_rows[ka], b_rows[kb]
        params = dict(wa.get("params") or {})
        variant = (wa.get("details") or {}).get("variant")
        if variant:
            params = {"variant": variant, **params}
        note = None if ka == kb else f"parameters differ: A {ka[2]}, B {kb[2]}"
        diffs.append(
            WorkloadDiff(
                name=str(wa.get("name")),
                device=str(wa.get("device")),
                params=params,
                throughput_unit=wa.get("throughput_unit"),
                a=_workload_pattern(fa, wa),
                b=_workload_pattern(fb, wb),
                note=note,
            )
        )
    return diffs, [_label(a_rows[k]) for k in left_a], [_label(b_rows[k]) for k in left_b]


def _step_seconds(record: Record) -> float | None:
    durations = [s.get("duration_seconds") for s in record.steps]
    values = [float(d) for d in durations if isinstance(d, (int, float))]
    return percentile(values, 50) if values else None


def _run_diff(fa: RunFacts, fb: RunFacts) -> WorkloadDiff | None:
    sa, sb = _step_seconds(fa.record), _step_seconds(fb.record)
    if sa is not None and sb is not None:
        name, pa_s, pb_s = "run (median step)", sa, sb
    elif fa.record.elapsed_seconds and fb.record.elapsed_seconds:
        name, pa_s, pb_s = "run (elapsed)", fa.record.elapsed_seconds, fb.record.elapsed_seconds
    else:
        return None
    return WorkloadDiff(
        name=name,
        device="host",
        params={},
        throughput_unit=None,
        a=pattern(fa, fa.window, seconds=pa_s),
        b=pattern(fb, fb.window, seconds=pb_s),
    )


def _notes(a: Record, b: Record, environment: Sequence[EnvItem]) -> list[str]:
    notes: list[str] = []
    if a.tfres_version != b.tfres_version:
        notes.append(
            f"the records come from different tfres versions (A {a.tfres_version or 'unknown'}, "
            f"B {b.tfres_version or 'unknown'}): only what both hold is compared"
        )
    for side, r, other in (("A", a, b), ("B", b, a)):
        lacking = [name for name in other.fingerprint if name not in r.fingerprint]
        if lacking:
            notes.append(
                f"{side}'s record has no {', '.join(sorted(lacking))} section(s) of the fingerprint"
            )
        if other.samples and not r.samples:
            notes.append(
                f"{side}'s record has no timeline: CPU and memory patterns are compared one-sided"
            )
    missing = [item.label for item in environment if item.missing]
    if missing:
        notes.append("recorded on one side only: " + ", ".join(missing))
    if a.kind != b.kind:
        notes.append(f"A is a {a.kind} record and B a {b.kind} record")
    return notes


def compare(a: Record, b: Record) -> Comparison:
    """Compare two records; ratios are B over A. Works across tfres versions and record kinds.

    c = compare(load("desktop.json"), load("laptop.json"))
    c.explanations[0].text  # "cpu_matmul n=2000 is 3.1x slower on B: ..."
    """
    fa, fb = run_facts(a), run_facts(b)
    environment = environment_diff(fa, fb)
    workloads, only_a, only_b = _workload_diffs(fa, fb)
    # whole-run ratios for `tfres run` records: a bench's elapsed time is not comparable
    run = None if a.workloads or b.workloads else _run_diff(fa, fb)
    subjects = list(workloads) + ([run] if run else [])
    explanations = [e for w in subjects if (e := explain(w, fa, fb, environment)) is not None]
    explanations.sort(key=lambda e: -e.ratio)
    notes = _notes(a, b, environment)
    if not subjects:
        notes.append(
            "the records share no workload and no run timing: only the environment is compared"
        )
    return Comparison(
        a=RunRef.of(a),
        b=RunRef.of(b),
        environment=tuple(environment),
        workloads=tuple(workloads),
        only_in_a=tuple(only_a),
        only_in_b=tuple(only_b),
        run=run,
        explanations=tuple(explanations),
        notes=tuple(notes),
    )
