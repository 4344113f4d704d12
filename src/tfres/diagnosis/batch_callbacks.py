"""A Keras ``fit``'s batch-end callbacks, as ``tfres run``'s hook timed them.

Each ``fit`` step carries ``callback_seconds`` (from the moment the train function returned,
the hook's callback being first in the list, to the next step's start, less the saves and
evaluate/predict calls among them, which are phases of their own) and
``callback_written_bytes`` (the ``wchar`` of ``/proc/self/io`` meanwhile; absent where the
kernel does not say). Callbacks that wrote :data:`SAVE_MIN_BYTES` or more in a step were
saving (weights dumped with NumPy, a pickle, an HDF5 file of their own): their seconds are
counted apart, for the saves rule. Read once per record into
:attr:`tfres.diagnosis.facts.RunFacts.batch_callbacks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CallbackTime", "callback_time", "SAVE_MIN_BYTES"]

#: A step's callbacks that wrote this much saved something: Keras's progress bar writes a
#: line of about 100 bytes a step, a ``CSVLogger`` a row an epoch; the smallest model in the
#: accuracy sets dumps 1.6 MB of weights.
SAVE_MIN_BYTES = 1 << 20


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


def callback_time(steps: Sequence[dict[str, Any]], names: Any = None) -> CallbackTime | None:
    """The batch-end callbacks of the training ``steps`` (the first left out), with the
    ``names`` of ``record.extra["batch_callbacks"]``; None when none were timed."""
    timed = [
        s
        for s in steps
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
    return CallbackTime(
        steps=len(timed),
        step_seconds=sum(float(s["duration_seconds"]) for s in timed),
        seconds=plain,
        save_steps=save_steps,
        save_seconds=saving,
        written_bytes=written,
        names=tuple(str(n) for n in names) if isinstance(names, list) else (),
    )
