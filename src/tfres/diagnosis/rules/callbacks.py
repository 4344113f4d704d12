"""The program's own Keras batch callbacks, where they hold the training steps back.

``tfres run``'s hook times each ``fit`` step's batch-end callbacks: from the moment the
train function returned (its callback is the first in the list) to the next step's start,
less the saves and evaluate/predict calls among them, which are phases of their own
(``callback_seconds``), and the bytes the process wrote meanwhile
(``callback_written_bytes``, the ``wchar`` of ``/proc/self/io``; absent where the kernel
does not say). Callbacks that wrote :data:`SAVE_MIN_BYTES` or more in a step were saving
(weights dumped with NumPy, a pickle, an HDF5 file of their own): :func:`callback_time`
counts those seconds apart, and the saves rule
(:func:`tfres.diagnosis.rules.phases.phase_share`) adds them to the known saves. The rest,
where it takes :data:`BATCH_CALLBACKS_SHARE` of the steps or more, is
:func:`batch_callbacks`'s finding: Python between the steps that the model waits for.

Where Keras dispatches the batch-end callbacks to a thread pool (all of them async-safe),
they do not hold the step, and the hook does not time them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from tfres.diagnosis.facts import RunFacts, training_steps
from tfres.diagnosis.rules.base import Finding, pct, seconds, size

__all__ = [
    "CallbackTime",
    "callback_time",
    "batch_callbacks",
    "named",
    "SAVE_MIN_BYTES",
    "BATCH_CALLBACKS_SHARE",
]

#: A step's callbacks that wrote this much saved something: Keras's progress bar writes a
#: line of about 100 bytes a step, a ``CSVLogger`` a row an epoch; the smallest model in the
#: accuracy sets dumps 1.6 MB of weights.
SAVE_MIN_BYTES = 1 << 20
#: The batch-end callbacks are the story of the training when they take this share of the
#: steps' time (the share at which evaluation or saves are named, see ``phases``).
BATCH_CALLBACKS_SHARE = 0.40


@dataclass(frozen=True)
class CallbackTime:
    """The batch-end callbacks of a run's timed training steps."""

    #: training steps whose callbacks were timed, and those steps' seconds
    steps: int
    step_seconds: float
    #: the callbacks' seconds in the steps where they did not save
    seconds: float
    #: the steps where the callbacks wrote :data:`SAVE_MIN_BYTES` or more, their callbacks'
    #: seconds and the bytes they wrote
    save_steps: int
    save_seconds: float
    written_bytes: int
    #: the program's callbacks with a batch-end hook (``NpzSnapshot.on_train_batch_end``)
    names: tuple[str, ...]


def callback_time(facts: RunFacts) -> CallbackTime | None:
    """The training steps' batch-end callbacks; None when none were timed."""
    timed = [
        s
        for s in training_steps(facts.record.steps)
        if isinstance(s.get("callback_seconds"), (int, float))
        and isinstance(s.get("duration_seconds"), (int, float))
    ]
    if not timed:
        return None
    plain = saving = 0.0
    save_steps = written = 0
    for s in timed:
        spent = min(float(s["callback_seconds"]), float(s["duration_seconds"]))
        wrote = s.get("callback_written_bytes")
        if isinstance(wrote, int) and wrote >= SAVE_MIN_BYTES:
            save_steps += 1
            saving += spent
            written += wrote
        else:
            plain += spent
    names = facts.record.extra.get("batch_callbacks")
    return CallbackTime(
        steps=len(timed),
        step_seconds=sum(float(s["duration_seconds"]) for s in timed),
        seconds=plain,
        save_steps=save_steps,
        save_seconds=saving,
        written_bytes=written,
        names=tuple(str(n) for n in names) if isinstance(names, list) else (),
    )


def named(time: CallbackTime) -> str:
    """The suspects, for evidence lines."""
    if time.names:
        return ", ".join(time.names)
    return "none of the program's own (Keras's progress bar and history only)"


def batch_callbacks(facts: RunFacts) -> Iterator[Finding]:
    """The program's batch-end callbacks, saves left out, take >= 40% of the training steps."""
    time = callback_time(facts)
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
