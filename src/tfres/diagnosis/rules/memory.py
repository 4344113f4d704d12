"""Memory rules: a run ended by out-of-memory, memory near its limit, swap growth, steady
growth toward the limit, and arrays loaded whole (suggest streaming).

"The limit" is the lowest of the RAM, the cgroup memory limit and a tfres memory budget
(``record.control["budget"]["budget_bytes"]``), see :mod:`tfres.diagnosis.facts`.
"""

from __future__ import annotations

from collections.abc import Iterator

from tfres.diagnosis.facts import RunFacts
from tfres.diagnosis.rules.base import Finding, pct, size, span_text
from tfres.record import Record

__all__ = [
    "out_of_memory",
    "memory_pressure",
    "swap_growth",
    "memory_growth",
    "streaming",
    "MEMORY_NEAR_LIMIT_CRITICAL",
    "MEMORY_NEAR_LIMIT_WARNING",
    "AVAILABLE_LOW_SHARE",
    "SWAP_GROWTH_MIN_BYTES",
    "GROWTH_MIN_SHARE",
    "GROWTH_MIN_R2",
    "STREAMING_MIN_SHARE",
    "STREAMING_MIN_BYTES",
    "RUNTIME_SETTLE_SECONDS",
    "runtime_up_seconds",
    "OOM_EXIT_CODES",
]

#: Peak RSS at >= 90% of the limit: one more batch or a fragment of allocator slack away
#: from an OOM kill; >= 75% leaves too little room for evaluation or a larger batch.
MEMORY_NEAR_LIMIT_CRITICAL = 0.90
MEMORY_NEAR_LIMIT_WARNING = 0.75
#: The host kept < 5% of its memory available: the kernel reclaims page cache and swaps.
AVAILABLE_LOW_SHARE = 0.05
#: Swap grew by >= 64 MiB during the run: pages of a live process went to disk.
SWAP_GROWTH_MIN_BYTES = 64 * 2**20
#: RSS rising in a straight line (R^2 >= 0.8) by >= 20% of the limit over the run: a leak or
#: an unbounded cache/shuffle buffer, not the usual warm-up plateau.
GROWTH_MIN_SHARE = 0.20
GROWTH_MIN_R2 = 0.80
#: RSS jumps by >= 20% of the limit (a memory budget included) and >= 1 GiB before the first
#: step and stays flat: the data set was loaded whole (np.load, pandas.read_csv) rather than
#: streamed. 1 GiB is above what importing TensorFlow and building a model take (0.4-0.7 GiB
#: on CPU; a `tfres run` child starts from a bare interpreter, ~10 MiB).
STREAMING_MIN_SHARE = 0.20
STREAMING_MIN_BYTES = 2**30
#: The RSS a TensorFlow runtime adds while it starts (a CUDA context maps GiBs of libraries)
#: is not data: the rise from the reading before it is up until this long after is left out.
RUNTIME_SETTLE_SECONDS = 2.0
#: 137 = 128 + SIGKILL, what a shell reports for a process the OOM killer ended; -9 is how
#: Python's subprocess reports the same signal.
OOM_EXIT_CODES = (137, -9)

_OOM_WORDS = ("out of memory", "oom", "memoryerror", "resourceexhausted", "memory budget", "budget")


def _rss(facts: RunFacts) -> list[tuple[float, int]]:
    return [(s.t_seconds, s.process_rss_bytes) for s in facts.record.samples if s.process_rss_bytes]


def _limit_text(facts: RunFacts) -> str:
    if facts.memory_limit is None:
        return "the limit"
    return f"the {facts.memory_limit[1]} ({size(facts.memory_limit[0])})"


#: a tree at this share of its memory limit when SIGKILL came was at the limit
OOM_AT_LIMIT_SHARE = 0.90


def _oom_evidence(record: Record, ratio: float | None) -> bool:
    """The kernel's OOM killer fired during the run (host or the budget's cgroup), or memory
    was at the limit when the run was killed."""
    budget = (record.control or {}).get("budget") or {}
    counts = (record.extra.get("oom_kills_during_run"), budget.get("cgroup_oom_kills"))
    if any(isinstance(n, int) and n > 0 for n in counts):
        return True
    return ratio is not None and ratio >= OOM_AT_LIMIT_SHARE


def out_of_memory(facts: RunFacts) -> Iterator[Finding]:
    """The run was killed (exit 137 / SIGKILL) or ended for memory (end_reason)."""
    r = facts.record
    reason = (r.end_reason or "").lower()
    killed = r.exit_code in OOM_EXIT_CODES or (r.signal or "").upper() in ("SIGKILL", "9", "KILLED")
    by_words = any(word in reason for word in _OOM_WORDS)
    if not (killed or by_words):
        return
    rss = _rss(facts)
    peak = max((b for _, b in rss), default=None)
    ratio = peak / facts.memory_limit[0] if peak and facts.memory_limit else None
    if killed and not by_words and not _oom_evidence(r, ratio):
        return  # kill -9, a pre-emption: SIGKILL alone is no proof of out-of-memory
    if by_words:
        how = f"the run ended: {r.end_reason}"
    else:
        how = (
            f"the run was killed by SIGKILL (exit {r.exit_code}), the way the kernel's OOM killer "
            "ends a process"
        )
    evidence = how
    if peak:
        evidence += f"; peak RSS {size(peak)}"
        if ratio is not None:
            evidence += f", {pct(ratio)} of {_limit_text(facts)}"
    span = (rss[-1][0], rss[-1][0]) if rss else None
    budget = "budget" in reason
    yield Finding(
        rule="out_of_memory",
        severity="critical",
        title="Stopped by the memory budget" if budget else "Ended by out-of-memory",
        evidence=evidence,
        cause=(
            "the run needed more memory than it may use: a batch, a cache or arrays loaded whole "
            "outgrew the limit"
        ),
        fix=(
            "find the batch size that fits: tfres batch-size script.py:build_model --budget 80%; "
            "stream the data with tf.data instead of loading arrays whole; keep runs under a "
            "budget that ends them cleanly: tfres run --memory-budget 80% -- python train.py"
        ),
        span=span,
        impact=1.0,
        risk=True,
    )


def memory_pressure(facts: RunFacts) -> Iterator[Finding]:
    """Peak RSS >= 75% of the limit (>= 90%: critical), or the host nearly out of memory."""
    rss = _rss(facts)
    if facts.memory_limit and rss:
        limit, what = facts.memory_limit
        t_peak, peak = max(rss, key=lambda tb: tb[1])
        ratio = peak / limit
        if ratio >= MEMORY_NEAR_LIMIT_WARNING:
            critical = ratio >= MEMORY_NEAR_LIMIT_CRITICAL
            yield Finding(
                rule="memory_pressure",
                severity="critical" if critical else "warning",
                title=f"Memory near its limit: peak RSS {pct(ratio)} of the {what}",
                evidence=(
                    f"peak RSS {size(peak)} at t={t_peak:.1f} s against {_limit_text(facts)}; "
                    f"RSS went from {size(rss[0][1])} at t={rss[0][0]:.1f} s"
                ),
                cause=(
                    "the run holds nearly all the memory it may use; the next allocation can fail"
                ),
                fix=(
                    "lower the batch size (tfres batch-size script.py:build_model --budget 80%), "
                    "stream data with tf.data instead of holding arrays, and cap the run: "
                    "tfres run --memory-budget 80% -- python train.py"
                ),
                span=(rss[0][0], t_peak),
                impact=min(1.0, ratio),
                risk=True,
            )
            return
    total = facts.memory_total_bytes
    avail = [
        (s.t_seconds, s.memory_available_bytes)
        for s in facts.active
        if s.memory_available_bytes is not None
    ]
    if total and avail:
        t_low, low = min(avail, key=lambda ta: ta[1])
        if low < AVAILABLE_LOW_SHARE * total:
            yield Finding(
                rule="memory_pressure",
                severity="warning",
                title=f"The host nearly ran out of memory: {pct(low / total)} available",
                evidence=(
                    f"available memory fell to {size(low)} of {size(total)} at t={t_low:.1f} s"
                ),
                cause=(
                    "the run and other processes together fill the RAM; the kernel reclaims and "
                    "swaps"
                ),
                fix=(
                    "close other memory-heavy programs, or lower the batch size / cache size of "
                    "the run"
                ),
                span=(t_low, t_low),
                impact=1.0 - low / total,
                risk=True,
            )


def swap_growth(facts: RunFacts) -> Iterator[Finding]:
    """Swap in use grew by >= 64 MiB during the run."""
    swap = [
        (s.t_seconds, s.swap_used_bytes)
        for s in facts.record.samples
        if s.swap_used_bytes is not None
    ]
    if len(swap) < 2:
        return
    t_max, top = max(swap, key=lambda ts: ts[1])
    grew = top - swap[0][1]
    if grew < SWAP_GROWTH_MIN_BYTES:
        return
    yield Finding(
        rule="swap_growth",
        severity="warning",
        title=f"Swapping: swap use grew by {size(grew)}",
        evidence=(
            f"swap used went from {size(swap[0][1])} at t={swap[0][0]:.1f} s to {size(top)} at "
            f"t={t_max:.1f} s"
        ),
        cause="memory ran short, so the kernel moved pages to disk; every access to them stalls",
        fix="lower the batch size or cache size, close other programs, or add RAM",
        span=(swap[0][0], t_max),
        impact=0.5,
    )


def _linear_fit(points: list[tuple[float, int]]) -> tuple[float, float]:
    """Slope (bytes/s) and R^2 of a least-squares line through the points."""
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(b for _, b in points) / n
    sxx = sum((t - mx) ** 2 for t, _ in points)
    syy = sum((b - my) ** 2 for _, b in points)
    sxy = sum((t - mx) * (b - my) for t, b in points)
    if sxx <= 0 or syy <= 0:
        return 0.0, 0.0
    return sxy / sxx, (sxy * sxy) / (sxx * syy)


def memory_growth(facts: RunFacts) -> Iterator[Finding]:
    """RSS grows in a straight line by >= 20% of the limit over the active window."""
    window = facts.window
    rss = [(t, b) for t, b in _rss(facts) if window is None or window[0] <= t <= window[1]]
    if len(rss) < 10 or facts.memory_limit is None:
        return
    limit, _ = facts.memory_limit
    slope, r2 = _linear_fit(rss)
    grew = rss[-1][1] - rss[0][1]
    if slope <= 0 or r2 < GROWTH_MIN_R2 or grew < GROWTH_MIN_SHARE * limit:
        return
    left = max(0, limit - rss[-1][1])
    eta = left / slope
    when = (
        "it reached the limit"
        if left <= 0.05 * limit
        else f"at this rate the limit is {eta:.0f} s past the end of the run"
    )
    yield Finding(
        rule="memory_growth",
        severity="warning",
        title=f"Memory grows steadily: {size(slope)}/s toward the {facts.memory_limit[1]}",
        evidence=(
            f"RSS rose {size(grew)} ({pct(grew / limit)} of {_limit_text(facts)}) in a straight "
            "line "
            f"(R^2 {r2:.2f}), {span_text((rss[0][0], rss[-1][0]))}; {when}"
        ),
        cause=(
            "something keeps every step's memory: a Python list of tensors or losses, an "
            "unbounded cache()/shuffle buffer, or model.predict results gathered in a loop"
        ),
        fix=(
            "keep scalars, not tensors (losses.append(float(loss))); bound caches and shuffle "
            "buffers; cap the run meanwhile: tfres run --memory-budget 80% -- python train.py"
        ),
        span=(rss[0][0], rss[-1][0]),
        impact=min(1.0, grew / limit),
        # a straight line has no end: given more steps it reaches any limit
        risk=True,
    )


def runtime_up_seconds(facts: RunFacts) -> float | None:
    """When the watched program's TensorFlow runtime was up, where the samples show it.

    The first sample with TensorFlow allocator readings (an in-process run) or with GPU
    memory held by the watched processes (its CUDA context); None when none shows it (a
    ``tfres run`` child on the CPU, or NVML unable to match the processes).
    """
    for s in facts.record.samples:
        if s.tf_memory or any((g.process_memory_used_bytes or 0) > 0 for g in s.gpus):
            return s.t_seconds
    return None


def _startup_bytes(rss: list[tuple[float, int]], up: float | None, end: float) -> int:
    """RSS the runtime's start added: from the reading before ``up`` to the highest within
    RUNTIME_SETTLE_SECONDS (0 when it was up from the first reading)."""
    if up is None:
        return 0
    prior = [b for t, b in rss if t < up]
    if not prior:
        return 0
    settle = [b for t, b in rss if up <= t <= min(up + RUNTIME_SETTLE_SECONDS, end)]
    return max(0, max(settle, default=prior[-1]) - prior[-1])


def streaming(facts: RunFacts) -> Iterator[Finding]:
    """A large RSS jump before training starts that then stays flat: data loaded whole.

    "Before training" is before the first step (or phase); with neither, the first quarter
    of the run. The jump leaves out what the TensorFlow runtime's own start took where the
    samples show when it was up (:func:`runtime_up_seconds`), and must reach 1 GiB, above
    what importing TensorFlow and building a model take. Under a memory budget (the
    lowest limit) the finding is a warning and measures the jump against the budget.
    """
    if facts.memory_limit is None:
        return
    r = facts.record
    rss = _rss(facts)
    if len(rss) < 4 or facts.window is None:
        return
    if r.steps or r.phases:
        start = facts.window[0]
    else:  # no step timing: the first quarter of the run is the set-up
        start = rss[0][0] + (rss[-1][0] - rss[0][0]) / 4
    before = [(t, b) for t, b in rss if t <= start]
    if len(before) < 2:
        before = rss[: max(2, len(rss) // 4)]
    after = [b for t, b in rss if t > before[-1][0]]
    t_top, top = max(before, key=lambda tb: tb[1])
    up = runtime_up_seconds(facts)
    startup = _startup_bytes(rss, up, before[-1][0])
    jump = top - rss[0][1] - startup
    limit, what = facts.memory_limit
    if jump < max(STREAMING_MIN_BYTES, STREAMING_MIN_SHARE * limit) or not after:
        return
    if max(after) - before[-1][1] > 0.5 * jump:  # still growing: memory_growth's case
        return
    budget = what == "memory budget"
    evidence = (
        f"RSS rose from {size(rss[0][1])} to {size(top)} by t={t_top:.1f} s, before training "
        f"started, and stayed flat afterwards: {size(jump)}, {pct(jump / limit)} of the {what}"
    )
    if startup and up is not None:
        evidence += (
            f" (not counting the {size(startup)} the TensorFlow runtime took when it started "
            f"at t={up:.1f} s)"
        )
    fix = (
        "stream it: tf.data.Dataset.from_generator(read_chunks, output_signature=...) or "
        "tf.data.TFRecordDataset(files).map(parse).batch(64).prefetch(tf.data.AUTOTUNE); "
        "np.load(path, mmap_mode='r') keeps a .npy file on disk"
    )
    if budget:
        fix += (
            "; and give tf.data the budget: "
            f"tfres.budget.watchdog.apply_budget(dataset, '{size(limit).replace(' ', '')}')"
        )
    yield Finding(
        rule="streaming",
        severity="warning" if budget else "info",
        title=f"Data loaded whole: {pct(jump / limit)} of the memory budget before training"
        if budget
        else f"Data loaded whole: RSS jumped {size(jump)} before training",
        evidence=evidence,
        cause=(
            "the whole data set sits in memory (NumPy arrays, a DataFrame) while the model sees "
            "one batch at a time"
        ),
        fix=fix,
        span=(rss[0][0], t_top),
        impact=jump / limit,
    )
