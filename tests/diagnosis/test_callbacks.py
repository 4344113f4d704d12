"""The batch-end callbacks' share of the training steps, as ``tfres run``'s hook times it:
named when it holds the steps, counted as saves where the callbacks wrote a megabyte or
more, left out of a clean run's "the step is TensorFlow math"."""

from __future__ import annotations

from typing import Any

import pytest

import synthetic as S
from tfres.diagnosis.batch_callbacks import SAVE_MIN_BYTES
from tfres.diagnosis.diagnose import diagnose
from tfres.diagnosis.facts import run_facts
from tfres.diagnosis.rules.callbacks import BATCH_CALLBACKS_SHARE
from tfres.record import Record
from tfres.timeline import Phase


def _fit(
    callback: float, *, written: int | None = 0, every: int = 1, n: int = 100, cpu: float = 100.0
) -> Record:
    """A fit of ``n`` steps of 50 ms of math after a 2 s start-up; every ``every``-th step's
    batch-end callbacks took ``callback`` seconds more and wrote ``written`` bytes."""
    r = S.record(samples_=S.samples(80, process_cpu=cpu))
    steps: list[dict[str, Any]] = []
    t = 2.0
    for i in range(n):
        timed = i % every == 0
        spent = callback if timed else 0.0001
        step: dict[str, Any] = {
            "kind": "fit",
            "step": i,
            "epoch": 0,
            "t_seconds": round(t, 6),
            "duration_seconds": 0.05 + spent,
            "input_wait_seconds": 0.0,
            "callback_seconds": spent,
        }
        if written is not None:
            step["callback_written_bytes"] = written if timed else 120
        steps.append(step)
        t += 0.05 + spent
    r.steps = steps
    r.phases = [
        Phase("import tensorflow", 0.1, 1.5),
        Phase("set-up", 1.5, 2.0),
        Phase("fit", 2.0, t),
        Phase("first step", 2.0, 2.05 + steps[0]["callback_seconds"]),
    ]
    r.elapsed_seconds = t + 0.5
    r.extra["batch_callbacks"] = ["Smoothing.on_train_batch_end"]
    return r


def test_callbacks_that_hold_the_steps_are_the_top_finding_with_their_names() -> None:
    found = diagnose(_fit(0.05))
    assert found[0].rule == "batch_callbacks"
    assert found[0].title == "Batch callbacks take 50% of the training steps"
    assert "Smoothing.on_train_batch_end" in found[0].evidence
    # "the step is TensorFlow math" would contradict it
    assert "compute_bound" not in [f.rule for f in found]


@pytest.mark.parametrize(
    ("callback", "named"),
    [(0.95, False), (1.05, True)],
)
def test_the_share_at_which_they_are_named(callback: float, named: bool) -> None:
    # a share s of a step of 50 ms of math: s * 0.05 / (1 - s) seconds of callbacks
    share = BATCH_CALLBACKS_SHARE * callback
    found = diagnose(_fit(share * 0.05 / (1 - share), cpu=150.0))
    assert ("batch_callbacks" in [f.rule for f in found]) is named


def test_a_progress_bars_share_is_said_in_the_clean_runs_evidence() -> None:
    # 1.5 cores busy: neither one core pegged nor all cores busy, which would say it instead
    found = diagnose(_fit(0.005, cpu=150.0))
    (clean,) = [f for f in found if f.rule == "compute_bound"]
    assert "batch-end callbacks 9% of it" in clean.evidence


def test_callbacks_that_write_are_saves_and_named_as_such() -> None:
    # unseen53/checkpoint_savezcompressed_batchcb_spellcorrector: np.savez_compressed of the
    # weights every 2nd batch, 0.35 s, 9.5 MB each
    r = _fit(0.35, written=9_500_000, every=2)
    time = run_facts(r).batch_callbacks
    # the first step (tracing) is left out: steps 2, 4 ... 98 saved, 1, 3 ... 99 did not
    assert time is not None and time.save_steps == 49 and time.seconds == pytest.approx(0.005)
    found = diagnose(r)
    assert found[0].rule == "phase_share"
    assert found[0].title.startswith("Model and checkpoint saves take")
    assert "the batch-end callbacks of 49 steps wrote 443.9 MiB" in found[0].evidence
    assert "batch_callbacks" not in [f.rule for f in found]


def test_a_megabyte_is_a_save_and_a_progress_line_is_not() -> None:
    facts = run_facts(_fit(0.04, written=SAVE_MIN_BYTES))
    assert facts.batch_callbacks.save_steps == 99  # type: ignore[union-attr]
    facts = run_facts(_fit(0.04, written=SAVE_MIN_BYTES - 1))
    assert facts.batch_callbacks.save_steps == 0  # type: ignore[union-attr]


def test_where_the_kernel_does_not_say_what_was_written_the_time_is_callbacks() -> None:
    time = run_facts(_fit(0.04, written=None)).batch_callbacks
    assert time is not None and time.save_steps == 0 and time.seconds == pytest.approx(99 * 0.04)
    assert time.step_seconds == pytest.approx(99 * 0.09)


def test_steps_without_callback_times_give_nothing() -> None:
    r = _fit(0.04)
    for s in r.steps:
        del s["callback_seconds"]
    assert run_facts(r).batch_callbacks is None
    assert "batch_callbacks" not in [f.rule for f in diagnose(r)]


def test_one_core_pegged_by_the_callbacks_comes_after_them() -> None:
    # 45%: less than one core pegged's impact on 2 cores (50%), yet its cause
    r = _fit(0.045 * 0.05 / 0.055, cpu=100.0)
    rules = [f.rule for f in diagnose(r)]
    assert "cpu_single_core" in rules
    assert rules.index("batch_callbacks") < rules.index("cpu_single_core")
