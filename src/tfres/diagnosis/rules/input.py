"""Input-bound: the training loop waits for its next batch.

The fraction of step time spent waiting for input comes from ``record.steps`` (steps
timed with :func:`tfres.watch.steps.timed` carry ``input_wait_seconds``) or, failing that, from a
:func:`tfres.watch.steps.measure_input_wait` result saved in ``record.extra["input_wait"]``.
"""

from __future__ import annotations

from collections.abc import Iterator

from tfres.diagnosis.facts import RunFacts, mean, training_steps, unprofiled_seconds
from tfres.diagnosis.fit_input import FitInput
from tfres.diagnosis.rules.base import Finding, pct, seconds, span_text

__all__ = ["input_bound", "INPUT_BOUND_HIGH", "INPUT_BOUND_MODERATE"]

#: The TensorFlow Profiler's input-pipeline analyzer calls a step "highly input-bound" when
#: input takes >= 20% of step time and "moderately input-bound" at 5-20%; the same bands
#: here let users relate the two tools.
INPUT_BOUND_HIGH = 0.20
INPUT_BOUND_MODERATE = 0.05

_FIX = (
    "dataset = dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)"
    ".cache().prefetch(tf.data.AUTOTUNE)  # parallel map, cache what repeats, prefetch; "
    "or do heavy preprocessing once, offline"
)


def _over_the_fit(fit: FitInput, span: str) -> str:
    return (
        f"input wait {pct(fit.fraction)} of the fit's step time ({span}): the "
        f"{fit.window_steps} steps of its profiler window waited {pct(fit.window_fraction)} "
        f"of theirs (measured), and its {fit.extended_steps} other steps ran "
        f"{seconds(fit.extended_wait_seconds)} of their {seconds(fit.extended_seconds)} "
        f"above {_non_input(fit)} ({seconds(fit.non_input_seconds)}), counted as their "
        "input: the same model on the same batch shape computes as long"
    )


def _non_input(fit: FitInput) -> str:
    if fit.alone:
        return "the step alone on a cached batch with its time outside the call, unprofiled"
    return "the window's median step less its wait"


def input_bound(facts: RunFacts) -> Iterator[Finding]:
    """Input wait >= 20% of step time: warning; 5-20%: info; below 5%: nothing."""
    fraction = facts.input_wait_fraction
    if fraction is None or fraction < INPUT_BOUND_MODERATE:
        return
    steps = [
        s
        for s in training_steps(facts.record.steps)
        if isinstance(s.get("input_wait_seconds"), (int, float))
    ]
    if steps:
        wait = sum(float(s["input_wait_seconds"]) for s in steps)
        total = sum(unprofiled_seconds(s) or 0.0 for s in steps)
        profiler = sum(float(s.get("duration_seconds") or 0.0) for s in steps) - total
        per_step = total / len(steps)
        host_cpu = mean(s.cpu_percent for s in facts.active)
        fit = facts.fit_input
        if fit is not None and fit.extended_steps:
            evidence = _over_the_fit(fit, span_text(facts.window))
        else:
            evidence = (
                f"input wait {pct(fraction)} of step time: {seconds(wait)} of {seconds(total)} "
                f"over {len(steps)} steps ({span_text(facts.window)}); a mean step takes "
                f"{seconds(per_step)}, "
                f"{seconds(wait / len(steps))} of it waiting for the next batch"
            )
        if profiler > 0:
            evidence += (
                f" (less {seconds(profiler)} that the profiler added to these steps, "
                f"{seconds(profiler / len(steps))} a step)"
            )
        if host_cpu is not None:
            evidence += f"; host CPU averaged {host_cpu:.0f}% meanwhile"
        profile = facts.record.extra.get("profile") or {}
        if profile.get("method"):
            evidence += f"; measured by {profile['method']}"
    else:
        measured = facts.record.extra.get("input_wait") or {}
        evidence = (
            f"input wait {pct(fraction)} of step time, measured by timing the input pipeline "
            f"alone, the model on cached data and the full run (tf.data performance guide): "
            f"full {seconds(measured.get('full_seconds_per_step'))}/step, compute only "
            f"{seconds(measured.get('compute_seconds_per_step'))}/step"
        )
    high = fraction >= INPUT_BOUND_HIGH
    yield Finding(
        rule="input_bound",
        severity="warning" if high else "info",
        title=("Highly" if high else "Moderately")
        + f" input-bound: {pct(fraction)} of each step waits for data",
        evidence=evidence,
        cause=(
            "the model finishes a step before the input pipeline has the next batch ready: "
            "reading, decoding or Python preprocessing runs serially on the critical path"
        ),
        fix=_FIX,
        span=facts.window,
        impact=fraction,
    )
