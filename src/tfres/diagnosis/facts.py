"""What a record says about its machine and its run, read once for diagnosis and compare.

A record's fingerprint may come from any tfres version, or lack sections: every value here
is ``None`` when the record cannot tell, never a guess dressed up as a reading. The derived
figures (usable cores, effective thread pools, background CPU, the active window) are the
ones :mod:`tfres.diagnosis.diagnose` and :mod:`tfres.comparison.compare` both reason with,
so the two always agree. The window is the *training*: steps of ``fit`` or a custom loop
(the first, tracing, left out), else the training phases; a run that is known to have no
training has no window, so the training rules say nothing about its start-up.

    facts = run_facts(record)
    facts.usable_cores, facts.threads.tf_intra_op, facts.background_cores_mean
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tfres.diagnosis.batch_callbacks import CallbackTime, callback_time
from tfres.diagnosis.fit_input import (
    FitInput,
    fit_input,
    profile_alone_seconds,
    unprofiled_seconds,
)
from tfres.record import Record
from tfres.timeline import Sample

__all__ = [
    "RunFacts",
    "ThreadSettings",
    "run_facts",
    "thread_settings",
    "samples_between",
    "background_cores",
    "input_wait_fraction",
    "unprofiled_seconds",
    "training_steps",
    "TRAINING_KINDS",
    "mean",
    "percentile",
    "int_env",
    "capacity",
]

#: Environment variables that set how many threads a compute library starts.
THREAD_ENV_VARS = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "TF_NUM_INTRAOP_THREADS",
    "TF_NUM_INTEROP_THREADS",
)


#: Variables BLAS libraries read for their thread count, in the order they take precedence.
_BLAS_VARS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "OMP_NUM_THREADS")


def mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are not None; None when there are none."""
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def percentile(values: Iterable[float | None], q: float) -> float | None:
    """The ``q``-th percentile (0-100, nearest rank) of the values that are not None."""
    vals = sorted(float(v) for v in values if v is not None)
    if not vals:
        return None
    rank = max(1, math.ceil(q / 100.0 * len(vals)))
    return vals[min(rank, len(vals)) - 1]


def int_env(env: dict[str, Any], name: str) -> int | None:
    """An integer environment variable from a fingerprint's env section; None if unset or bad."""
    value = env.get(name)
    if value is None:
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        return None
    return number if number > 0 else None


def capacity(cores: float, threads: int | float | None, background: float | None) -> float:
    """Cores' worth of CPU a job of ``threads`` threads gets on ``cores`` cores beside
    ``background`` cores of other load; ``threads=None`` means one per core.

    The job runs ``p = min(threads, cores)`` wide and, with ``bg`` cores of other load, gets
    ``p * min(1, cores / (p + bg))``: the kernel shares cores fairly between runnable threads.

    >>> capacity(2, None, 1.0)  # two threads beside one busy core get 4/3 of a core
    1.3333333333333333
    """
    p = min(float(threads) if threads else cores, cores)
    bg = max(0.0, background or 0.0)
    return p * min(1.0, cores / (p + bg)) if bg > 0 else p


@dataclass(frozen=True)
class ThreadSettings:
    """The thread pools a run starts, as far as the fingerprint and environment tell.

    Each count is the effective one (an explicit setting, else the library's default);
    ``sources`` says where each came from, e.g. ``{"blas": "OMP_NUM_THREADS=1"}``.
    """

    tf_intra_op: int | None = None
    tf_inter_op: int | None = None
    blas: int | None = None
    blas_api: str | None = None
    sources: tuple[tuple[str, str], ...] = ()
    #: the pools set on purpose (an environment variable or tf.config), not left at default
    explicit: tuple[str, ...] = ()

    def source(self, pool: str) -> str | None:
        return dict(self.sources).get(pool)


def thread_settings(
    fp: dict[str, Any], *, default_cores: int | None, env: dict[str, Any] | None = None
) -> ThreadSettings:
    """Effective TF intra/inter-op and BLAS thread counts from a fingerprint dict.

    TensorFlow reads ``TF_NUM_INTRAOP_THREADS``/``TF_NUM_INTEROP_THREADS`` and
    ``tf.config.threading``; 0 there means its default, one thread per schedulable core
    (``default_cores``). BLAS threads are what threadpoolctl reported (it already reflects
    ``OMP_NUM_THREADS`` and friends); without a BLAS section they come from those variables.
    ``env`` overrides the fingerprint's env section (a ``tfres run`` child's environment).
    """
    if env is None:
        env = fp.get("env") or {}
    tf = fp.get("tensorflow") or {}
    sources: dict[str, str] = {}
    explicit: list[str] = []

    def tf_pool(env_name: str, fp_key: str, pool: str) -> int | None:
        from_env = int_env(env, env_name)
        if from_env is not None:
            sources[pool] = f"{env_name}={from_env}"
            explicit.append(pool)
            return from_env
        configured = tf.get(fp_key)
        if isinstance(configured, int) and configured > 0:
            sources[pool] = f"tf.config.threading ({configured})"
            explicit.append(pool)
            return configured
        if tf.get("installed") and default_cores:
            sources[pool] = "TensorFlow default: one per core"
            return default_cores
        return None

    intra = tf_pool("TF_NUM_INTRAOP_THREADS", "intra_op_threads", "tf_intra_op")
    inter = tf_pool("TF_NUM_INTEROP_THREADS", "inter_op_threads", "tf_inter_op")

    blas: int | None = None
    blas_api: str | None = None
    pools = [p for p in (fp.get("blas") or []) if isinstance(p, dict)]
    counts = [int(p["num_threads"]) for p in pools if isinstance(p.get("num_threads"), int)]
    if counts:
        blas = max(counts)
        top = next(p for p in pools if p.get("num_threads") == blas)
        blas_api = top.get("internal_api")
        var = next(
            (v for v in _BLAS_VARS if int_env(env, v) is not None),
            None,
        )
        if var:
            blas = int_env(env, var)  # the run's own setting wins over the parent's reading
            sources["blas"] = f"{var}={env[var]}"
            explicit.append("blas")
        else:
            sources["blas"] = f"{blas_api or 'BLAS'} default"
    else:
        for var in _BLAS_VARS:
            value = int_env(env, var)
            if value is not None:
                blas = value
                sources["blas"] = f"{var}={value}"
                explicit.append("blas")
                break
    return ThreadSettings(
        intra, inter, blas, blas_api, tuple(sorted(sources.items())), tuple(explicit)
    )


@dataclass(frozen=True)
class RunFacts:
    """Derived facts about one record; made by :func:`run_facts`. None where not known."""

    record: Record
    #: behaviour-changing environment variables of the run: the fingerprint's, with what
    #: ``tfres run`` set for the child (``record.control["environment"]``) on top
    env: dict[str, str]
    logical_cores: int | None
    usable_cores: float | None
    affinity: tuple[int, ...] | None
    cpu_quota_cores: float | None
    memory_total_bytes: int | None
    #: the lowest memory limit that applies: (bytes, what it is), e.g. (2**30, "memory budget")
    memory_limit: tuple[int, str] | None
    threads: ThreadSettings
    #: the span the rules look at: the steps, else the phases, else the whole timeline
    window: tuple[float, float] | None
    #: the samples inside ``window``
    active: tuple[Sample, ...]
    background_cores_mean: float | None
    #: the training steps' input share: a Keras fit's over all its steps
    #: (:func:`tfres.diagnosis.fit_input.fit_input`), else over the steps that carry a wait
    input_wait_fraction: float | None
    #: a Keras fit's input share, measured in its profiler window and extended to its other
    #: steps; None without a measured fit step
    fit_input: FitInput | None
    #: the training steps' batch-end callbacks (a Keras fit's, under ``tfres run``); None
    #: where none were timed
    batch_callbacks: CallbackTime | None

    @property
    def framework(self) -> str:
        """``"pytorch"`` or ``"jax"`` for a program the start-up hook saw run on that framework
        without TensorFlow (its ``PyTorch program``/``JAX program`` phase), else
        ``"tensorflow"``: the rules word their fixes for it."""
        names = {p.name for p in self.record.phases}
        return next(
            (fw for name, fw in OTHER_FRAMEWORK_PHASES.items() if name in names), "tensorflow"
        )

    @property
    def fingerprint(self) -> dict[str, Any]:
        return self.record.fingerprint or {}

    def section(self, name: str) -> dict[str, Any]:
        value = self.fingerprint.get(name)
        return value if isinstance(value, dict) else {}


def samples_between(samples: Sequence[Sample], start: float, end: float) -> list[Sample]:
    """The samples with ``start <= t_seconds <= end``."""
    return [s for s in samples if start <= s.t_seconds <= end]


def background_cores(
    sample: Sample, logical_cores: int | None, cpus: tuple[int, ...] | None = None
) -> float | None:
    """Cores' worth of CPU used by processes outside the watched tree in one sample.

    System CPU times the core count, minus the tree's CPU (100 = one core). With ``cpus``
    (the run's affinity) and per-core readings, only those cores count: load on cores the
    run may not use does not compete with it. None when a figure is missing.
    """
    if sample.process_cpu_percent is None or not logical_cores:
        return None
    own = sample.process_cpu_percent / 100.0
    per_core = sample.cpu_per_core_percent
    if cpus and per_core and len(cpus) < len(per_core) and max(cpus) < len(per_core):
        return max(0.0, sum(per_core[c] for c in cpus) / 100.0 - own)
    if sample.cpu_percent is None:
        return None
    return max(0.0, sample.cpu_percent / 100.0 * logical_cores - own)


def input_wait_fraction(steps: Sequence[dict[str, Any]]) -> float | None:
    """Total input wait over total step time, for the steps that carry ``input_wait_seconds``.

    A step of the profiler window counts without what the profiler added to it
    (``profiler_seconds``, already out of its input wait): the share an unprofiled step
    waits."""
    wait = total = 0.0
    for step in steps:
        w = step.get("input_wait_seconds")
        d = unprofiled_seconds(step)
        if isinstance(w, (int, float)) and d is not None and d > 0:
            wait += max(0.0, min(float(w), d))
            total += d
    return wait / total if total > 0 else None


#: the ``kind`` of training steps (``tfres run``'s hook: Keras fit, a custom loop's hot
#: tf.function); steps with no kind come from tfres's own step timer and are training too
TRAINING_KINDS = ("fit", "loop", None)
#: the phases (written by ``tfres run``'s hook) that are training
TRAINING_PHASES = ("fit", "training loop")
#: the phase the start-up hook writes for a program on a framework it does not instrument:
#: all that follows the framework's import, judged as the run's work
OTHER_FRAMEWORK_PHASES = {"PyTorch program": "pytorch", "JAX program": "jax"}


def training_steps(steps: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The training steps of ``record.steps`` (not evaluate/predict), without the first
    step of each kind (tracing and graph building) when there are others."""
    out = [s for s in steps if s.get("kind") in TRAINING_KINDS]
    later = [s for s in out if not (s.get("kind") and s.get("step") == 0)]
    return later or out


def _window(record: Record) -> tuple[float, float] | None:
    """The training steps' span; else the training phases'; else (no instrumentation at
    all) the whole timeline. None when the run is known to have no training."""
    timed = [
        s for s in training_steps(record.steps) if isinstance(s.get("t_seconds"), (int, float))
    ]
    if timed:
        start = min(float(s["t_seconds"]) for s in timed)
        end = max(float(s["t_seconds"]) + float(s.get("duration_seconds") or 0.0) for s in timed)
        return (start, end)
    spans = [
        (p.start_seconds, p.end_seconds)
        for p in record.phases
        if p.end_seconds is not None and (p.name in TRAINING_PHASES or _is_bench_phase(p.name))
    ]
    if spans:
        return (min(a for a, _ in spans), max(b for _, b in spans if b is not None))
    if record.steps or record.phases:
        return None  # instrumented, and nothing trained: no training window
    if record.samples:
        return (record.samples[0].t_seconds, record.samples[-1].t_seconds)
    return None


def _is_bench_phase(name: str) -> bool:
    """Phases not written by the hook (tfres bench workloads, a user's marks) count as work."""
    return name not in _HOOK_PHASES and not name.startswith("fit epoch ")


_HOOK_PHASES = (
    "import tensorflow",
    "import torch",
    "import jax",
    "set-up",
    "start-up",
    "first step",
    "first evaluate step",
    "first predict step",
    "evaluate",
    "validation",
    "epoch-end callbacks",
    "epoch-end evaluation",
    "loop evaluation",
    "predict",
    "model save",
    "checkpoint save",
    "after training",
)


def _logical_cores(cpu: dict[str, Any], samples: Sequence[Sample]) -> int | None:
    n = cpu.get("logical_cores")
    if isinstance(n, int) and n > 0:
        return n
    widths = [len(s.cpu_per_core_percent) for s in samples if s.cpu_per_core_percent]
    return max(widths) if widths else None


def _usable_cores(
    cpu: dict[str, Any], logical: int | None
) -> tuple[float | None, tuple[int, ...] | None, float | None]:
    affinity = cpu.get("affinity")
    aff = tuple(int(c) for c in affinity) if isinstance(affinity, list) and affinity else None
    quota = cpu.get("cgroup_cpu_quota_cores")
    quota = float(quota) if isinstance(quota, (int, float)) and quota > 0 else None
    usable = cpu.get("usable_cores")
    if isinstance(usable, (int, float)) and usable > 0:
        return float(usable), aff, quota
    candidates = [float(x) for x in (len(aff) if aff else None, quota, logical) if x]
    return (min(candidates) if candidates else None), aff, quota


def _memory_limit(record: Record, memory: dict[str, Any]) -> tuple[int, str] | None:
    limits: list[tuple[int, str]] = []
    total = memory.get("total_bytes")
    if isinstance(total, int) and total > 0:
        limits.append((total, "RAM"))
    cgroup = memory.get("cgroup_memory_limit_bytes")
    if isinstance(cgroup, int) and cgroup > 0:
        limits.append((cgroup, "cgroup memory limit"))
    budget = (record.control or {}).get("budget")
    if (
        isinstance(budget, dict)
        and isinstance(budget.get("budget_bytes"), int)
        and budget["budget_bytes"] > 0
    ):
        limits.append((int(budget["budget_bytes"]), "memory budget"))
    return min(limits) if limits else None


def run_facts(record: Record) -> RunFacts:
    """Read ``record`` once into :class:`RunFacts`; missing sections give None fields."""
    fp = record.fingerprint or {}
    cpu: dict[str, Any] = fp["cpu"] if isinstance(fp.get("cpu"), dict) else {}
    memory: dict[str, Any] = fp["memory"] if isinstance(fp.get("memory"), dict) else {}
    logical = _logical_cores(cpu, record.samples)
    usable, affinity, quota = _usable_cores(cpu, logical)
    default_cores = len(affinity) if affinity else logical
    window = _window(record)
    active = tuple(samples_between(record.samples, *window)) if window else ()
    background = mean(background_cores(s, logical, affinity) for s in active)
    total = memory.get("total_bytes")
    env = dict(fp.get("env") or {}) if isinstance(fp.get("env"), dict) else {}
    child_env = (record.control or {}).get("environment")
    if isinstance(child_env, dict):
        env.update({str(k): str(v) for k, v in child_env.items()})
    steps = training_steps(record.steps)
    fit = fit_input(steps, profile_alone_seconds((record.extra or {}).get("profile")))
    fraction = fit.fraction if fit is not None else input_wait_fraction(steps)
    if fraction is None:
        measured = (record.extra or {}).get("input_wait")
        if isinstance(measured, dict) and isinstance(
            measured.get("input_wait_fraction"), (int, float)
        ):
            fraction = float(measured["input_wait_fraction"])
    return RunFacts(
        record=record,
        env=env,
        logical_cores=logical,
        usable_cores=usable,
        affinity=affinity,
        cpu_quota_cores=quota,
        memory_total_bytes=total if isinstance(total, int) else None,
        memory_limit=_memory_limit(record, memory),
        threads=thread_settings(fp, default_cores=default_cores, env=env),
        window=window,
        active=active,
        background_cores_mean=background,
        input_wait_fraction=fraction,
        fit_input=fit,
        batch_callbacks=callback_time(steps, (record.extra or {}).get("batch_callbacks")),
    )
