"""The written explanation of ``tfres compare``: each large difference linked to the
environment differences that account for it, with the evidence.

Causal mapping (which differences can explain which results):

- CPU work (``cpu_matmul``, TF workloads on a CPU device, ``tfres run`` records) <- the
  thread pool the work uses (BLAS for NumPy, TF intra-op for TensorFlow), usable cores
  (affinity, cgroup quota), other processes' CPU during the work, then the CPU itself
  (model, vector ISA, clock) and library versions;
- GPU work <- GPU model and memory, driver and CUDA versions, TensorFlow version;
- peak memory <- workload parameters (batch size), TensorFlow and NumPy versions, RAM.

Thread, core and background effects are quantified with a simple capacity model: the work
runs ``p = min(threads, usable cores)`` wide and, with ``bg`` cores of other load, gets
``p * min(1, cores / (p + bg))`` cores (the kernel shares cores fairly between runnable
threads). Each cause's "up to" factor is the faster side's capacity over the capacity it
would have with that one value taken from the slower side.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from tfres.comparison.environment import EnvItem, _ranges
from tfres.comparison.patterns import LARGE_RATIO, WorkloadDiff
from tfres.diagnosis.facts import RunFacts, capacity, int_env
from tfres.diagnosis.rules.cpu import background_processes

__all__ = ["Explanation", "explain", "capacity", "MIN_CAUSE_FACTOR"]

#: A cause must move capacity by >= 10% to be named as one: less is within timing noise.
MIN_CAUSE_FACTOR = 1.10
#: Workloads that run on NumPy's BLAS rather than TensorFlow's thread pools.
BLAS_WORKLOADS = ("cpu_matmul",)


@dataclass(frozen=True)
class Explanation:
    """Why one workload (or the run) differs: ``ratio`` >= 1 on the ``slower`` side."""

    subject: str
    metric: str  # "time" | "memory"
    ratio: float
    slower: str  # "A" | "B": the slower side, or the one using more memory
    text: str
    #: environment keys (see EnvItem.key) named as causes, strongest first
    causes: tuple[str, ...] = ()
    #: how much of ``ratio`` the quantified causes account for together, if any
    accounted: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["causes"] = list(self.causes)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Explanation:
        return cls(
            subject=d["subject"],
            metric=d["metric"],
            ratio=float(d["ratio"]),
            slower=d["slower"],
            text=d["text"],
            causes=tuple(d.get("causes") or ()),
            accounted=d.get("accounted"),
        )


def _pools(w: WorkloadDiff) -> tuple[str, ...]:
    if w.name in BLAS_WORKLOADS:
        return ("blas",)
    if w.name.startswith("run"):
        return ("tf_intra_op", "blas")
    return ("tf_intra_op",)


def _explicit(f: RunFacts, pool: str) -> int | None:
    return getattr(f.threads, pool) if pool in f.threads.explicit else None


def _short_source(f: RunFacts, pool: str) -> str:
    env = f.env
    names = (
        ("TF_NUM_INTRAOP_THREADS",)
        if pool == "tf_intra_op"
        else ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
    )
    for name in names:
        if int_env(env, name) is not None:
            return f"{name}={env[name]}"
    return "tf.config.threading" if pool == "tf_intra_op" else "set in code"


_POOL_NAMES = {"blas": "BLAS", "tf_intra_op": "TensorFlow intra-op pool"}


def _cores_cause(fs: RunFacts, ff: RunFacts, s: str, f: str) -> tuple[str, str]:
    us, uf = fs.usable_cores or 0, ff.usable_cores or 0
    if fs.affinity != ff.affinity and fs.affinity and ff.affinity:
        key = "cpu.affinity"
        how = f"its CPU affinity is {_ranges(fs.affinity)} against {_ranges(ff.affinity)} on {f}"
    elif fs.cpu_quota_cores != ff.cpu_quota_cores:
        key = "cpu.quota"
        quota = lambda q: "none" if q is None else f"{q:g} cores"  # noqa: E731
        how = (
            f"its cgroup CPU quota is {quota(fs.cpu_quota_cores)} against "
            f"{quota(ff.cpu_quota_cores)} on {f}"
        )
    else:
        key = "cpu.usable_cores"
        how = "it has fewer cores"
    return key, f"{s} may use {us:g} core{'s' if us != 1 else ''} against {uf:g} on {f} ({how})"


def _background_names(f: RunFacts) -> str:
    procs = background_processes(f)[:2]
    if not procs:
        return ""
    return (
        " (busiest: "
        + ", ".join(f"{p.get('name')} {float(p['cpu_percent']):.0f}%" for p in procs)
        + ")"
    )


def _compute_causes(
    w: WorkloadDiff, fs: RunFacts, ff: RunFacts, s: str, f: str
) -> tuple[list[tuple[float, str, str]], float | None]:
    """[(factor, env key, text)] for threads, cores and background, and their joint factor."""
    ps, pf = (w.b, w.a) if s == "B" else (w.a, w.b)
    us, uf = fs.usable_cores, ff.usable_cores
    if not us or not uf:
        return [], None
    bgs = ps.background_cores if ps.background_cores is not None else fs.background_cores_mean
    bgf = pf.background_cores if pf.background_cores is not None else ff.background_cores_mean
    causes: list[tuple[float, str, str]] = []
    joint: float | None = None
    for pool in _pools(w):
        ts, tf = _explicit(fs, pool), _explicit(ff, pool)
        base = capacity(uf, tf, bgf)
        if base <= 0:
            continue
        joint = max(joint or 0.0, base / max(capacity(us, ts, bgs), 1e-9))
        if ts != tf:
            factor = base / max(capacity(uf, ts, bgf), 1e-9)
            count_s = ts if ts is not None else getattr(fs.threads, pool)
            count_f = tf if tf is not None else getattr(ff.threads, pool)
            source = _short_source(fs, pool) if ts is not None else "default"
            text = (
                f"{s}'s {_POOL_NAMES[pool]} runs {count_s} thread{'s' if count_s != 1 else ''} "
                f"({source}) against {count_f} on {f}"
            )
            causes.append((factor, f"threads.{pool}", text))
    pool = _pools(w)[0]
    tf_ = _explicit(ff, pool)
    base = capacity(uf, tf_, bgf)
    if us != uf and base > 0:
        key, text = _cores_cause(fs, ff, s, f)
        causes.append((base / max(capacity(us, tf_, bgf), 1e-9), key, text))
    if bgs is not None and bgf is not None and base > 0:
        factor = base / max(capacity(uf, tf_, bgs), 1e-9)
        text = (
            f"other processes took {bgs:.1f} cores on {s} while it ran, against {bgf:.1f} on {f}"
            + _background_names(fs)
        )
        causes.append((factor, "load.background", text))
    causes = [c for c in causes if c[0] >= MIN_CAUSE_FACTOR]
    causes.sort(key=lambda c: -c[0])
    return causes, (joint if causes else None)


_COMPUTE_KEYS = (
    "load.background",
    "cpu.model",
    "cpu.isa",
    "cpu.frequency_mhz",
    "blas.library",
    "tf.version",
    "software.numpy",
)
_GPU_KEYS = (
    "gpu.models",
    "gpu.memory",
    "gpu.driver",
    "gpu.cuda_driver",
    "tf.cuda",
    "tf.cudnn",
    "tf.version",
)
_MEMORY_KEYS = ("tf.version", "software.numpy", "memory.total", "memory.cgroup_limit")


def _other_changes(keys: tuple[str, ...], env: list[EnvItem], s: str) -> list[tuple[str, str]]:
    out = []
    for item in env:
        if item.changed and item.key in keys:
            vs, vf = (item.b, item.a) if s == "B" else (item.a, item.b)
            out.append((item.key, f"{item.label} {vs} on {s} against {vf}"))
    return out


def _cpu_evidence(w: WorkloadDiff, s: str, f: str) -> str:
    ps, pf = (w.b, w.a) if s == "B" else (w.a, w.b)
    if ps.process_cpu_mean_percent is None or pf.process_cpu_mean_percent is None:
        return ""
    return (
        f" Meanwhile {s}'s processes averaged {ps.process_cpu_mean_percent:.0f}% CPU "
        f"against {pf.process_cpu_mean_percent:.0f}% on {f} (100% = one core)."
    )


def explain(w: WorkloadDiff, fa: RunFacts, fb: RunFacts, env: list[EnvItem]) -> Explanation | None:
    """The explanation of ``w``'s difference, or None when it is within :data:`LARGE_RATIO`."""
    ratio = w.time_ratio
    if ratio is None and w.throughput_ratio:
        ratio = 1.0 / w.throughput_ratio
    metric = "time"
    if ratio is None or abs(math.log(ratio)) < math.log(LARGE_RATIO):
        ratio, metric = w.memory_ratio, "memory"
        if ratio is None or abs(math.log(ratio)) < math.log(LARGE_RATIO):
            return None
    s, f = ("B", "A") if ratio > 1 else ("A", "B")
    fs, ff = (fb, fa) if s == "B" else (fa, fb)
    factor = max(ratio, 1.0 / ratio)
    subject = w.title if w.device in ("host", "") else f"{w.title} on {w.device}"
    causes: list[tuple[float | None, str, str]] = []
    accounted = None
    if metric == "memory":
        if w.note:
            causes.append((None, "params", w.note))
        causes += [(None, k, t) for k, t in _other_changes(_MEMORY_KEYS, env, s)]
        head = f"{subject} peaks {factor:.1f}x higher in memory on {s}"
    elif w.device.upper().startswith("GPU"):
        causes += [(None, k, t) for k, t in _other_changes(_GPU_KEYS, env, s)]
        head = f"{subject} is {factor:.1f}x slower on {s}"
    else:
        quantified, accounted = _compute_causes(w, fs, ff, s, f)
        causes += quantified
        named = {k for _, k, _ in quantified}
        causes += [(None, k, t) for k, t in _other_changes(_COMPUTE_KEYS, env, s) if k not in named]
        head = f"{subject} is {factor:.1f}x slower on {s}"
    if causes:
        parts = [t + (f" (accounts for up to {x:.1f}x)" if x else "") for x, _, t in causes]
        text = f"{head}: " + "; ".join(parts) + "."
        if accounted and len([c for c in causes if c[0]]) > 1:
            text += f" Together these account for up to {accounted:.1f}x."
    else:
        text = (
            f"{head}, and no recorded environment difference accounts for it: likely run-to-run "
            "noise or a cause tfres does not record (thermal state, turbo, disk, other users)."
        )
    if metric == "time" and not w.device.upper().startswith("GPU"):
        text += _cpu_evidence(w, s, f)
    return Explanation(
        subject=subject,
        metric=metric,
        ratio=round(factor, 3),
        slower=s,
        text=text,
        causes=tuple(dict.fromkeys(k for _, k, _ in causes)),
        accounted=round(accounted, 3) if accounted else None,
    )
