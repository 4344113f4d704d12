"""The program's own Keras batch callbacks, where they hold the training steps back.

``tfres run``'s hook times each ``fit`` step's batch-end callbacks
(:mod:`tfres.diagnosis.batch_callbacks`, read into ``RunFacts.batch_callbacks``). Those that
wrote a megabyte or more in a step were saving: the saves rule
(:func:`tfres.diagnosis.rules.phases.phase_share`) adds them to the known saves. The rest,
where it takes :data:`BATCH_CALLBACKS_SHARE` of the steps or more, is
:func:`batch_callbacks`'s finding: Python between the steps that the model waits for.

Where Keras dispatches the batch-end callbacks to a thread pool (all of them async-safe),
they do not hold the step, and the hook does not time them.
"""

from __future__ import annotations

from collections.abc import Iterator

from tfres.diagnosis.batch_callbacks import CallbackTime
from tfres.diagnosis.facts import RunFacts
from tfres.diagnosis.rules.base import Finding, pct, seconds, size

__all__ = ["batch_callbacks", "named", "BATCH_CALLBACKS_SHARE"]

#: The batch-end callbacks are the story of the training when they take this share of the
#: steps' time (the share at which evaluation or saves are named, see ``phases``).
BATCH_CALLBACKS_SHARE = 0.40


def named(time: CallbackTime) -> str:
    """The suspects, for evidence lines."""
    if time.names:
        return ", ".join(time.names)
    return "none of the program's own (Keras's progress bar and history only)"


def batch_callbacks(facts: RunFacts) -> Iterator[Finding]:
    """The program's batch-end callbacks, saves left out, take >= 40% of the training steps."""
    time = facts.batch_callbacks
    if time is None or time.step_seconds <= 0:
        return
    share = time.seconds / time.step_seconds
    if share < BATCH_CALLBACKS_SHARE:
        return
    evidence = (
        f"{time.steps} training steps took {seconds(time.step_seconds)}; the batch-end "
        f"callbacks ran {seconds(time.seconds)} of it after the train function returned "
        f"({seconds(time.seconds / time.steps)} a step on average); callbacks with a batch-end "
        f"hook: {named(time)}"
    )
    if time.save_steps:
        evidence += (
            f"; {time.save_steps} more steps' callbacks wrote {size(time.written_bytes)} "
            f"in {seconds(time.save_seconds)} (counted as saves)"
        )
    yield Finding(
        rule="batch_callbacks",
        severity="warning",
        title=f"Batch callbacks take {pct(share)} of the training steps",
        evidence=evidence,
        cause=(
            "Python in on_train_batch_end runs between the steps, and the next step waits for it"
        ),
        fix=(
            "do the callback's work every N batches or in on_epoch_end; compute metrics in "
            "model.compile(metrics=[...]), inside the step's graph; with fit(verbose=2) the "
            "progress is printed once an epoch"
        ),
        span=facts.window,
        impact=share,
    )
