"""Input wait of ``model.fit``-style training, measured from outside the loop.

:func:`measure_input_wait` follows the tf.data performance guide: it times the input pipeline
alone, the model on one cached batch, and the full run; the input-wait fraction is
``max(0, (full - compute_only) / full)``. Also reachable as ``tfres.steps.measure_input_wait``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from tfres.diagnosis.rules.input import INPUT_BOUND_HIGH, INPUT_BOUND_MODERATE

if TYPE_CHECKING:  # pragma: no cover
    from tfres.record import Record

__all__ = ["InputWaitMeasurement", "measure_input_wait"]


@dataclass(frozen=True)
class InputWaitMeasurement:
    """What :func:`measure_input_wait` found; times are medians per step, in seconds.

    ``input_wait_fraction`` is ``max(0, (full - compute_only) / full)``, clipped to 0-1:
    the share of a training step the model spends waiting for data.
    """

    steps: int
    repeats: int
    input_seconds_per_step: float
    compute_seconds_per_step: float
    full_seconds_per_step: float
    input_wait_fraction: float

    @property
    def band(self) -> str:
        """``"high"`` (>= 20%), ``"moderate"`` (5-20%) or ``"low"``: the TF Profiler's bands."""

        if self.input_wait_fraction >= INPUT_BOUND_HIGH:
            return "high"
        return "moderate" if self.input_wait_fraction >= INPUT_BOUND_MODERATE else "low"

    def to_dict(self) -> dict[str, Any]:
        return dict(asdict(self), band=self.band)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> InputWaitMeasurement:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__})

    def save_to(self, record: Record) -> None:
        """Keep the measurement in ``record.extra["input_wait"]``, where diagnosis reads it."""
        record.extra["input_wait"] = self.to_dict()


def _block(result: Any) -> None:
    """Wait for a step's result: eager tensors (possibly on a GPU) finish when read."""
    if isinstance(result, dict):
        for value in result.values():
            _block(value)
    elif isinstance(result, (list, tuple)):
        for value in result:
            _block(value)
    elif hasattr(result, "numpy"):
        result.numpy()


def _keras_step(model: Any) -> Callable[[Any], Any]:
    def step(batch: Any) -> Any:
        if isinstance(batch, (tuple, list)):
            return model.train_on_batch(*batch)
        return model.train_on_batch(batch)

    return step


def measure_input_wait(
    dataset: Iterable[Any],
    step: Callable[[Any], Any] | None = None,
    *,
    model: Any = None,
    steps: int = 20,
    warmup: int = 2,
    repeats: int = 1,
    clock: Callable[[], float] = time.perf_counter,
) -> InputWaitMeasurement:
    """Measure how much of a training step waits for input, as the tf.data guide recommends.

    Three timings of ``steps`` steps each (medians over ``repeats``, interleaved): the input
    pipeline alone (iterating ``dataset``), the training step on one cached batch repeated
    (``dataset.take(1).cache().repeat()`` in effect), and the full run. ``step(batch)``
    runs one training step; or pass a compiled Keras ``model`` and ``train_on_batch`` is
    used. ``dataset`` must be iterable more than once (a ``tf.data.Dataset`` is) and hold at
    least ``warmup + steps`` batches. ``warmup`` steps on the cached batch come first so
    tracing and graph building are not counted.

        m = tfres.steps.measure_input_wait(train_ds, model=model, steps=30)
        m.input_wait_fraction  # 0.47: nearly half of each step waits for data
    """
    if (step is None) == (model is None):
        raise ValueError("give exactly one of step= (a callable doing one training step) or model=")
    if steps < 1 or warmup < 0 or repeats < 1:
        raise ValueError(
            f"steps and repeats must be >= 1 and warmup >= 0 (got {steps}, {repeats}, {warmup})"
        )
    run = step if step is not None else _keras_step(model)

    first = next(iter(dataset), None)
    if first is None:
        raise ValueError("the dataset is empty; measure_input_wait needs at least one batch")
    for _ in range(warmup):
        _block(run(first))

    def input_only() -> tuple[float, int]:
        n = 0
        t = clock()
        for _batch in dataset:
            n += 1
            if n >= steps:
                break
        return clock() - t, n

    def compute_only() -> tuple[float, int]:
        t = clock()
        for _ in range(steps):
            _block(run(first))
        return clock() - t, steps

    def full() -> tuple[float, int]:
        n = 0
        t = clock()
        for batch in dataset:
            _block(run(batch))
            n += 1
            if n >= steps:
                break
        return clock() - t, n

    per_step: dict[str, list[float]] = {"input": [], "compute": [], "full": []}
    for _ in range(repeats):
        for name, fn in (("input", input_only), ("compute", compute_only), ("full", full)):
            seconds, n = fn()
            if n == 0:
                raise ValueError(
                    "the dataset yielded no batches on a second pass; pass a re-iterable dataset"
                )
            per_step[name].append(seconds / n)
    input_s = statistics.median(per_step["input"])
    compute_s = statistics.median(per_step["compute"])
    full_s = statistics.median(per_step["full"])
    fraction = min(1.0, max(0.0, (full_s - compute_s) / full_s)) if full_s > 0 else 0.0
    return InputWaitMeasurement(
        steps=steps,
        repeats=repeats,
        input_seconds_per_step=input_s,
        compute_seconds_per_step=compute_s,
        full_seconds_per_step=full_s,
        input_wait_fraction=fraction,
    )
