"""CPU rules: all cores busy, one core pegged, thread pools starved or oversubscribed,
and other processes taking the CPU during the run.

CPU of the watched tree is in "top" units (100 = one core busy); "usable cores" are the
fewest of the affinity cores and the cgroup CPU quota (see :mod:`tfres.diagnosis.facts`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tfres.diagnosis.facts import RunFacts, background_cores, capacity, mean, percentile
from tfres.diagnosis.rules.advice import CPU_BOUND_FIX, SINGLE_CORE_TEXT
from tfres.diagnosis.rules.base import Finding, cores, pct, span_text
from tfres.diagnosis.rules.input import INPUT_BOUND_HIGH

__all__ = [
    "cpu_bound",
    "threads_starved",
    "thread_oversubscription",
    "background_load",
    "ALL_CORES_BUSY_SHARE",
    "SATURATED_RUN_SHARE",
    "SATURATED_SHARE",
    "SINGLE_CORE_MIN_PERCENT",
    "SINGLE_CORE_MAX_PERCENT",
    "SINGLE_CORE_P95_MAX_PERCENT",
    "IDLE_MIN_CORES",
    "STARVED_MIN_LOSS",
    "POOL_OVERSUBSCRIBED_RATIO",
    "POOLS_OVERSUBSCRIBED_RATIO",
    "BACKGROUND_MIN_CORES",
    "BACKGROUND_MIN_SHARE",
    "BACKGROUND_PROCESS_MIN_PERCENT",
    "MIN_SAMPLES",
]

#: Fewer samples than this in the window say too little about a CPU pattern (0.5 s at 10 Hz).
MIN_SAMPLES = 5
#: The tree uses >= 80% of its usable cores on average: CPU-bound on all cores. 80%, not 100%,
#: because the first samples of each step and the sampler's own rounding never read full.
ALL_CORES_BUSY_SHARE = 0.80
#: ... or the tree used >= 50% of them while it and other processes together kept >= 90% of
#: them busy: the run took all the CPU it could get on a shared machine.
SATURATED_RUN_SHARE = 0.50
SATURATED_SHARE = 0.90
#: Mean tree CPU between 80% and 120% with 2+ usable cores: one core pegged (Python/GIL-bound).
#: One busy thread reads 90-105% in `top`; 120% leaves room for a little helper-thread work.
SINGLE_CORE_MIN_PERCENT = 80.0
SINGLE_CORE_MAX_PERCENT = 120.0
#: ... and rarely above it: a p95 over 125% means several cores work in bursts (a run that
#: alternates multi-threaded compute with waiting averages ~100% without being GIL-bound).
SINGLE_CORE_P95_MAX_PERCENT = 125.0
#: A thread setting is blamed when it costs >= 10% of the compute the run could get (by the
#: capacity model of tfres.facts.capacity); less is within timing noise.
STARVED_MIN_LOSS = 0.10
#: Cores left idle (neither the run nor other processes used them) for a single thread or a
#: thread setting to be the limit; below half a core, the competition for cores is
#: (background_load).
IDLE_MIN_CORES = 0.5
#: One pool (TF intra-op or BLAS) with more threads than 1.25x the usable cores: the classic
#: container case (TensorFlow sizes its pools by the host's cores, not the cgroup quota).
POOL_OVERSUBSCRIBED_RATIO = 1.25
#: TF intra-op plus BLAS threads above 2x the usable cores: both pools compute at once when
#: NumPy/SciPy run beside TF ops (tf.py_function, tf.numpy_function, Keras generators).
POOLS_OVERSUBSCRIBED_RATIO = 2.0
#: Other processes count as background load from half a core and a quarter of the machine:
#: below that, system daemons and the sampler itself are in the noise.
BACKGROUND_MIN_CORES = 0.5
BACKGROUND_MIN_SHARE = 0.25
#: A process is named as background load from 10% CPU (a tenth of a core) upwards.
BACKGROUND_PROCESS_MIN_PERCENT = 10.0


def _process_cpu(facts: RunFacts) -> list[float]:
    return [s.process_cpu_percent for s in facts.active if s.process_cpu_percent is not None]


def _gpu_in_use(facts: RunFacts) -> bool:
    utils = [g.util_percent for s in facts.active for g in s.gpus if g.util_percent is not None]
    return bool(utils) and (mean(utils) or 0.0) >= 5.0


def _restricted_pools(facts: RunFacts) -> list[tuple[str, int, str]]:
    """(pool, threads, source) for pools set on purpose below the usable cores."""
    usable = facts.usable_cores or 0
    t = facts.threads
    out = []
    for pool, label, count in (
        ("tf_intra_op", "TF intra-op", t.tf_intra_op),
        ("blas", "BLAS", t.blas),
    ):
        if pool in t.explicit and count is not None and count < usable:
            out.append((label, count, t.source(pool) or ""))
    return out


def cpu_bound(facts: RunFacts) -> Iterator[Finding]:
    """All usable cores busy (info; a warning when a GPU waits on it), or one core pegged."""
    cpu = _process_cpu(facts)
    usable = facts.usable_cores
    if len(cpu) < MIN_SAMPLES or not usable:
        return
    avg = mean(cpu) or 0.0
    p95 = percentile(cpu, 95) or 0.0
    share = avg / (100.0 * usable)
    window = span_text(facts.window)
    bg = facts.background_cores_mean or 0.0
    saturated = share >= SATURATED_RUN_SHARE and avg / 100.0 + bg >= SATURATED_SHARE * usable
    if share >= ALL_CORES_BUSY_SHARE or saturated:
        on_gpu = _gpu_in_use(facts)
        evidence = (
            f"the watched processes averaged {avg:.0f}% CPU (p95 {p95:.0f}%), "
            f"{pct(share)} of {cores(usable)} usable, {window}"
        )
        if share < ALL_CORES_BUSY_SHARE:
            evidence += (
                f"; other processes took the remaining {cores(bg)}: the cores were saturated"
            )
        yield Finding(
            rule="cpu_bound",
            severity="warning" if on_gpu else "info",
            title=f"CPU-bound: the run keeps all {cores(usable)} busy"
            if share >= ALL_CORES_BUSY_SHARE
            else f"CPU-bound: the run took all the CPU it could get ({cores(avg / 100)})",
            evidence=evidence,
            cause=(
                "the host CPU is the bottleneck while the GPU waits for it"
                if on_gpu
                else "the computation itself fills the CPU: it is compute-bound on this host"
            ),
            fix=CPU_BOUND_FIX[facts.framework],
            span=facts.window,
            impact=share,
        )
        return
    if usable < 2 or _restricted_pools(facts):
        return

    if (facts.input_wait_fraction or 0.0) >= INPUT_BOUND_HIGH:
        return  # a run that waits for data has its CPU diluted: input_bound says why
    # one thread is the limit only if cores were left idle: not when others took them
    idle = usable - avg / 100.0 - (facts.background_cores_mean or 0.0)
    if (
        SINGLE_CORE_MIN_PERCENT <= avg <= SINGLE_CORE_MAX_PERCENT
        and p95 <= SINGLE_CORE_P95_MAX_PERCENT
        and idle >= IDLE_MIN_CORES
    ):
        busiest = _busiest_core(facts)
        extra = f"; the busiest core averaged {busiest:.0f}%" if busiest is not None else ""
        yield Finding(
            rule="cpu_single_core",
            severity="warning",
            title=f"One core pegged: the run uses 1 of {cores(usable)}",
            evidence=(
                f"the watched processes averaged {avg:.0f}% CPU (p95 {p95:.0f}%), {window}{extra}"
            ),
            cause=SINGLE_CORE_TEXT[facts.framework][0],
            fix=SINGLE_CORE_TEXT[facts.framework][1],
            span=facts.window,
            impact=1.0 - 1.0 / usable,
        )


def _busiest_core(facts: RunFacts) -> float | None:
    per_core = [s.cpu_per_core_percent for s in facts.active if s.cpu_per_core_percent]
    if not per_core:
        return None
    width = min(len(p) for p in per_core)
    return max(mean(p[i] for p in per_core) or 0.0 for i in range(width))


def threads_starved(facts: RunFacts) -> Iterator[Finding]:
    """Thread pools set below the usable cores while the run used < 80% of them, when the
    setting costs >= 10% of the compute the run could get beside the other load."""
    restricted = _restricted_pools(facts)
    usable = facts.usable_cores
    if not restricted or not usable:
        return
    cap = max(count for _, count, _ in restricted)
    cpu = _process_cpu(facts)
    pools = ", ".join(
        f"{label} {count} thread{'s' if count > 1 else ''} ({source})"
        for label, count, source in restricted
    )
    if len(cpu) >= MIN_SAMPLES:
        avg = mean(cpu) or 0.0
        if avg >= ALL_CORES_BUSY_SHARE * usable * 100.0:
            return
        # the compute lost to the setting, beside the other load there was (capacity model)
        bg = facts.background_cores_mean or 0.0
        impact = 1.0 - capacity(usable, cap, bg) / capacity(usable, None, bg)
        if impact < STARVED_MIN_LOSS:
            return
        used = f"; the run averaged {avg:.0f}% CPU ({cores(avg / 100)}), {span_text(facts.window)}"
        if bg >= BACKGROUND_MIN_CORES:
            used += f", beside {cores(bg)} of other processes"
        severity = "warning"
    else:
        used, severity, impact = "", "info", 1.0 - cap / usable
    yield Finding(
        rule="threads_starved",
        severity=severity,
        title=f"Thread-starved: the thread settings allow {cap} of {cores(usable)}",
        evidence=f"{pools} on {cores(usable)} usable{used}",
        cause="thread settings cap the work at fewer threads than the cores this run may use",
        fix=(
            "unset the limit (unset OMP_NUM_THREADS TF_NUM_INTRAOP_THREADS) or set it to the "
            f"usable cores: tf.config.threading.set_intra_op_parallelism_threads({int(usable)})"
        ),
        span=facts.window,
        impact=impact,
    )


def thread_oversubscription(facts: RunFacts) -> Iterator[Finding]:
    """A pool above 1.25x the usable cores, or TF intra-op + BLAS above 2x."""
    usable = facts.usable_cores
    t = facts.threads
    if not usable:
        return
    limit_name = (
        f"the cgroup CPU quota of {cores(usable)}"
        if facts.cpu_quota_cores is not None and facts.cpu_quota_cores <= usable
        else f"{cores(usable)} usable"
    )
    pools = [
        (label, n, t.source(key) or "")
        for key, label, n in (
            ("tf_intra_op", "TF intra-op", t.tf_intra_op),
            ("blas", "BLAS", t.blas),
        )
        if n
    ]
    worst = max(pools, key=lambda p: p[1], default=None)
    total = sum(n for _, n, _ in pools)
    listing = ", ".join(f"{label} {n} ({source})" for label, n, source in pools)
    threads = [s.process_threads for s in facts.active if s.process_threads is not None]
    seen = f"; the process tree ran up to {max(threads)} threads" if threads else ""
    if worst and worst[1] > POOL_OVERSUBSCRIBED_RATIO * usable:
        ratio, severity = worst[1] / usable, "warning"
        title = f"Thread oversubscription: {worst[0]} starts {worst[1]} threads for {cores(usable)}"
    elif total > POOLS_OVERSUBSCRIBED_RATIO * usable:
        ratio, severity = total / usable, "info"
        title = f"Thread oversubscription: {total} compute threads for {cores(usable)}"
    else:
        return
    yield Finding(
        rule="thread_oversubscription",
        severity=severity,
        title=title,
        evidence=f"{listing} against {limit_name}{seen}",
        cause=(
            "more compute threads than cores: they preempt each other, thrash caches and "
            "wait at barriers (TensorFlow and BLAS size their pools by the host's cores, not "
            "by a container's CPU quota)"
        ),
        fix=(
            f"export OMP_NUM_THREADS={max(1, int(usable))} "
            f"TF_NUM_INTRAOP_THREADS={max(1, int(usable))} "
            f"TF_NUM_INTEROP_THREADS=2  # or: tfres run --cpu-threads {max(1, int(usable))} -- "
            "python train.py"
        ),
        span=None,
        impact=min(1.0, 1.0 - 1.0 / ratio),
    )


def background_processes(facts: RunFacts) -> list[dict[str, Any]]:
    """Other processes busy on the CPU, busiest first (from the sampler or the fingerprint)."""
    listed = facts.record.extra.get("top_processes") or (facts.section("load").get("top_cpu") or [])
    own = {facts.record.extra.get("pid")}
    out = []
    for p in listed:
        if not isinstance(p, dict) or p.get("pid") in own:
            continue
        cpu = p.get("cpu_percent")
        name = str(p.get("name") or "")
        if (
            isinstance(cpu, (int, float))
            and cpu >= BACKGROUND_PROCESS_MIN_PERCENT
            and "tfres" not in name
        ):
            out.append(p)
    return sorted(out, key=lambda p: -float(p["cpu_percent"]))


def _contention(facts: RunFacts, machine: int, background: float) -> float:
    """The share of the run's compute lost to other processes (capacity model)."""
    usable = min(float(machine), facts.usable_cores or float(machine))
    threads = facts.threads.tf_intra_op
    return max(0.0, 1.0 - capacity(usable, threads, background) / capacity(usable, threads, 0.0))


def background_load(facts: RunFacts) -> Iterator[Finding]:
    """Processes outside the watched tree took >= half a core and >= 25% of the machine."""
    logical = facts.logical_cores
    if not logical:
        return
    # load on cores the run may not use (affinity) does not compete with it
    aff = facts.affinity
    machine = len(aff) if aff and len(aff) < logical else logical
    other = [b for b in (background_cores(s, logical, aff) for s in facts.active) if b is not None]
    if len(other) < MIN_SAMPLES:
        return
    avg = mean(other) or 0.0
    share = avg / machine
    if avg < BACKGROUND_MIN_CORES or share < BACKGROUND_MIN_SHARE:
        return
    names = background_processes(facts)[:4]
    named = (
        "; busiest: "
        + ", ".join(
            f"{p.get('name')} (pid {p.get('pid')}, {float(p['cpu_percent']):.0f}%)" for p in names
        )
        if names
        else "; tfres could not name them (no process list in this record)"
    )
    own = mean(s.process_cpu_percent for s in facts.active)
    yield Finding(
        rule="background_load",
        severity="warning",
        title=f"Background load: other processes took {cores(avg)} of {cores(machine)}",
        evidence=(
            f"system CPU minus the watched processes: {cores(avg)} on average "
            f"({pct(share)} of the machine, p95 {cores(percentile(other, 95) or 0.0)}), "
            f"{span_text(facts.window)}; the run itself averaged "
            f"{'n/a' if own is None else f'{own:.0f}%'}{named}"
        ),
        cause="other programs compete with the run for the same cores",
        fix=(
            "stop or pause them during training (top -o %CPU; kill -STOP PID), or pin them "
            "apart: taskset -c 0 python train.py / taskset -cp 1 PID"
        ),
        span=facts.window,
        impact=_contention(facts, machine, avg),
    )
