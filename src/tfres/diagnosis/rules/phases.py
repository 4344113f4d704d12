"""Phase rules: start-up, evaluation and saves that dominate a run, and what bounds a clean one.

The phases come from ``tfres run``'s start-up hook (:mod:`tfres.devices.inject`): ``import
tensorflow``, ``set-up`` (model build, compile, data, up to the first step), ``fit``,
``training loop``, ``evaluate``/``validation``/``predict`` (and ``loop evaluation``, a custom
loop's own evaluation between its steps), ``model save``/``checkpoint save``, ``after
training``, and the first calls: ``first step`` (of training) and ``first
evaluate step``/``first predict step`` (each model's first such batch), which trace the
model's functions, a one-time cost like start-up. Training rules (CPU, input) look at the
training phases only; these rules speak for the rest, so a run with no training step still
gets an answer and a start-up never gets training advice.
"""

from __future__ import annotations

from collections.abc import Iterator

from tfres.diagnosis.facts import TRAINING_PHASES, RunFacts, mean, training_steps
from tfres.diagnosis.rules.base import Finding, cores, pct, seconds, size, span_text
from tfres.diagnosis.rules.callbacks import BATCH_CALLBACKS_SHARE, named
from tfres.diagnosis.rules.input import INPUT_BOUND_MODERATE

__all__ = [
    "startup",
    "phase_share",
    "compute_bound",
    "STARTUP_DOMINANT_RATIO",
    "PHASE_DOMINANT_SHARE",
    "WORK_PHASES",
]

#: Start-up is the story of the run (a warning, the top finding) when it and the first calls
#: (tracing) took at least twice as long as all the steady work after it (training,
#: evaluation, prediction, saves), and the run trained for less than
#: :data:`PHASE_MIN_WORK_SHARE` of its time: a run that trained longer has a training story,
#: which its training findings tell (start-up is then a line of its own, for information).
STARTUP_DOMINANT_RATIO = 2.0
#: Evaluation or saving is named when it takes >= 40% of the steady work after start-up
#: (the first calls' tracing left out, a one-time cost like start-up): then it, not the
#: training step, decides how long the run takes.
PHASE_DOMINANT_SHARE = 0.40
#: ...and only when the steady work is at least this share of the run: below it, the run is
#: its start-up's story (a model zoo's one-batch predicts are nearly all tracing).
PHASE_MIN_WORK_SHARE = 0.10
#: a clean run's evidence gives the batch-end callbacks' share of the steps from this share
CALLBACKS_MENTION_SHARE = 0.05
#: The phases that are work (everything after start-up that is not "after training").
#: ``loop evaluation``: a custom loop's own evaluation between its steps (the model run
#: outside the training step, eagerly or in another tf.function)
LOOP_EVAL = "loop evaluation"
WORK_PHASES = (
    "fit",
    "training loop",
    "evaluate",
    LOOP_EVAL,
    "predict",
    "model save",
    "checkpoint save",
)
_EVAL = ("evaluate", "validation", LOOP_EVAL, "predict")
_EVAL_FIX = (
    "evaluate less often: model.fit(..., validation_freq=5) or validation_steps=N; "
    "evaluate with a larger batch_size; predict on a subset"
)
#: a custom loop's evaluation is its own code
_LOOP_EVAL_FIX = (
    "evaluate every few epochs or on a sample of the test set, on larger batches, in a "
    "@tf.function eval step (eager model calls and metric updates run op by op)"
)
_SAVES = ("model save", "checkpoint save")
#: the program's own ``on_epoch_end`` callbacks (``tfres run``'s hook writes them where they
#: took 50 ms or more): where one evaluates or predicts, all of its time is evaluation
EPOCH_END = "epoch-end callbacks"
#: ...written so where they ran the model themselves, outside ``evaluate``/``predict`` (a
#: tf.function of ``model(x, training=True)`` for MC dropout): evaluation too
EPOCH_END_EVAL = "epoch-end evaluation"
_FIRST_EVAL = ("first evaluate step", "first predict step")
#: the first calls: each traces a model's function once per process
FIRST_CALLS = ("first step", *_FIRST_EVAL)


def _total(facts: RunFacts, names: tuple[str, ...]) -> float:
    return sum(
        (p.end_seconds or p.start_seconds) - p.start_seconds
        for p in facts.record.phases
        if p.name in names
    )


def _run_seconds(facts: RunFacts) -> float | None:
    r = facts.record
    if r.elapsed_seconds:
        return float(r.elapsed_seconds)
    return r.samples[-1].t_seconds if r.samples else None


def _startup_end(facts: RunFacts) -> float | None:
    ends = [p.end_seconds for p in facts.record.phases if p.name in ("set-up", "start-up")]
    return max((e for e in ends if e is not None), default=None)


def _covered_seconds(facts: RunFacts, names: tuple[str, ...]) -> float:
    """Seconds covered by the phases named, nested or overlapping ones counted once (a
    checkpoint save inside ``fit`` is part of the fit's time, not added to it)."""
    return _union_seconds(
        [
            (p.start_seconds, p.end_seconds or p.start_seconds)
            for p in facts.record.phases
            if p.name in names
        ]
    )


def _union_seconds(spans: list[tuple[float, float]]) -> float:
    """Seconds covered by ``spans``, overlapping ones counted once."""
    covered, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            covered += end - max(start, reach)
            reach = end
    return covered


def _evaluating_callbacks(facts: RunFacts) -> tuple[int, float]:
    """The program's epoch-end callbacks that evaluate or predict (an evaluate or predict
    phase inside them, or the model run by the callbacks themselves): how many, and their
    seconds outside those phases and outside saves. That is the rest of the user's
    evaluation: a metric computed in NumPy over the predictions, a nearest-neighbour
    retrieval, a plot (``unseen38/eval_knnretrieval_products`` spent 4 s an epoch on a NumPy
    recall@10 after 0.8 s of ``evaluate`` and ``predict``), or all of it."""
    phases = facts.record.phases
    inner = [
        (p.name, p.start_seconds, p.end_seconds or p.start_seconds)
        for p in phases
        if p.name in _EVAL or p.name in _SAVES
    ]
    count, outside = 0, 0.0
    for p in phases:
        if p.name not in (EPOCH_END, EPOCH_END_EVAL) or p.end_seconds is None:
            continue
        start, end = p.start_seconds, p.end_seconds
        inside = [
            (name, max(a, start), min(b, end)) for name, a, b in inner if a < end and b > start
        ]
        if p.name == EPOCH_END and not any(name in _EVAL for name, _, _ in inside):
            continue
        count += 1
        outside += max(0.0, end - start - _union_seconds([(a, b) for _, a, b in inside]))
    return count, outside


def _work_seconds(facts: RunFacts) -> float:
    """Training, evaluation, prediction and saves, each second counted once (validation
    and saves inside fit are part of the fit)."""
    return _covered_seconds(facts, WORK_PHASES)


def _steady_work_seconds(facts: RunFacts) -> float:
    """The work less the first calls (tracing, graph building, XLA): paid once per process,
    they say nothing about how the run spends its time from then on."""
    return max(0.0, _work_seconds(facts) - _total(facts, FIRST_CALLS))


def _steady_training_seconds(facts: RunFacts) -> float:
    """Training (``fit``, a custom loop), each second counted once, less its first steps."""
    return max(0.0, _covered_seconds(facts, TRAINING_PHASES) - _total(facts, ("first step",)))


def _training_seconds(facts: RunFacts) -> float:
    """``fit`` and custom loops, less a loop's own evaluation between its steps."""
    names = ("fit", "training loop")
    return _covered_seconds(facts, (*names, LOOP_EVAL)) - _covered_seconds(facts, (LOOP_EVAL,))


def startup(facts: RunFacts) -> Iterator[Finding]:
    """The time before the first step: its own line, never training advice.

    It is the run's story (:data:`STARTUP_DOMINANT_RATIO`) only in a run that did not train
    for long. A script that writes its data set before a short ``fit`` (a JSON-lines file in
    14 s, then 4.5 s of training: ``unseen15/input_jsonl_ecommerce``) spends most of its run
    before the first step, yet its steps wait for input: that is what the user asks about,
    and what grows with the training; the start-up's share is said beside it."""
    end = _startup_end(facts)
    run = _run_seconds(facts)
    if end is None or not run:
        return
    imports = _total(facts, ("import tensorflow",))
    if not imports:
        return  # not a TensorFlow program (or TensorFlow came in before the hook)
    work = _work_seconds(facts)
    first_calls = _total(facts, FIRST_CALLS)
    steady = _steady_work_seconds(facts)
    share = min(1.0, end / run)
    trained = _steady_training_seconds(facts) >= PHASE_MIN_WORK_SHARE * run
    dominant = steady == 0 or (end + first_calls >= STARTUP_DOMINANT_RATIO * steady and not trained)
    parts = [f"TensorFlow's import {seconds(imports)}"] if imports else []
    setup = _total(facts, ("set-up",))
    if setup:
        parts.append(f"model build, compile and data {seconds(setup)}")
    steps = training_steps(facts.record.steps)
    first = f"the first step started at t={end:.1f} s" if steps or work else "no training step ran"
    yield Finding(
        rule="startup",
        severity="warning" if dominant else "info",
        title=(
            f"TensorFlow import, start-up and first calls: {seconds(end + first_calls)}, "
            f"{pct(min(1.0, (end + first_calls) / run))} of this run"
            if dominant and first_calls
            else f"TensorFlow import and start-up: {seconds(end)}, {pct(share)} of this run"
        ),
        evidence=f"{', '.join(parts) or 'start-up'}; {first}; the run took {seconds(run)}"
        + (f", the work after start-up {seconds(work)}" if work else "")
        + (
            f", of it the first calls of fit/evaluate/predict (tracing) {seconds(first_calls)}"
            if first_calls and work
            else ""
        ),
        cause=(
            "importing TensorFlow, building the model and tracing its functions cost more "
            "than the work itself"
            if dominant
            else "a fixed cost paid once per process"
        ),
        fix=(
            "do more work per process (more epochs or files per run) or keep a process alive "
            "between jobs; import only what you use (import keras, not every TF submodule); "
            "training advice does not apply to this time"
        ),
        span=(0.0, end),
        impact=share if dominant else 0.1 * share,
    )


def phase_share(facts: RunFacts) -> Iterator[Finding]:
    """Evaluation/prediction or model saves take >= 40% of the steady work after start-up,
    in a run that trains: a run that only predicts (a smoke test's predict on a sample) is
    all prediction by definition, and "evaluate less often" means nothing there."""
    work = _steady_work_seconds(facts)
    run = _run_seconds(facts)
    if work <= 0 or (run and work < PHASE_MIN_WORK_SHARE * run):
        return
    if not _covered_seconds(facts, TRAINING_PHASES):
        return
    in_loop = any(p.name == LOOP_EVAL for p in facts.record.phases)
    evaluating, around_eval = _evaluating_callbacks(facts)
    batch_time = facts.batch_callbacks
    saving = batch_time.save_seconds if batch_time else 0.0
    for names, first_calls, around, also, what, fix in (
        (
            _EVAL,
            _FIRST_EVAL,
            around_eval,
            f"{seconds(around_eval)} more in the {evaluating} epoch-end callback(s) that "
            "evaluate or predict (the metrics they compute around the calls, or the model "
            "run by the callback itself)"
            if evaluating
            else "",
            "Evaluation and prediction",
            _LOOP_EVAL_FIX if in_loop else _EVAL_FIX,
        ),
        (
            _SAVES,
            (),
            saving,
            f"the batch-end callbacks of {batch_time.save_steps} steps wrote "
            f"{size(batch_time.written_bytes)} in {seconds(saving)} (the program's own saves; "
            f"callbacks with a batch-end hook: {named(batch_time)})"
            if saving and batch_time
            else "",
            "Model and checkpoint saves",
            "save less often: ModelCheckpoint(..., save_freq='epoch' or N*steps, "
            "save_best_only=True, save_weights_only=True), or the callback's own save "
            "every N batches or in on_epoch_end",
        ),
    ):
        spent = max(0.0, _total(facts, names) + around - _total(facts, first_calls))
        share = spent / work
        if share < PHASE_DOMINANT_SHARE:
            continue
        count = sum(1 for p in facts.record.phases if p.name in names)
        parts = [f"{count} {what.lower()} phase(s)"] if count or not also else []
        yield Finding(
            rule="phase_share",
            severity="warning",
            title=f"{what} take {pct(share)} of the work",
            evidence=(
                f"{', and '.join([*parts, also] if also else parts)}: {seconds(spent)} of "
                f"{seconds(work)} of work after start-up and the first calls (training "
                f"{seconds(_training_seconds(facts))})"
            ),
            cause=f"{what.lower()} run often or long compared with the training steps",
            fix=fix,
            span=None,
            impact=share,
        )


def compute_bound(facts: RunFacts) -> Iterator[Finding]:
    """A training run with little input wait: the step itself bounds it (info)."""
    steps = training_steps(facts.record.steps)
    fraction = facts.input_wait_fraction
    if not steps or fraction is None:
        return

    if fraction >= INPUT_BOUND_MODERATE:
        return
    usable = facts.usable_cores
    cpu = mean(s.process_cpu_percent for s in facts.active)
    on = f" on {cores(usable)}" if usable else ""
    total = sum(float(s.get("duration_seconds") or 0.0) for s in steps)
    evidence = (
        f"{len(steps)} training steps of {seconds(total / len(steps))} on average, input wait "
        f"{pct(fraction)} of step time ({span_text(facts.window)})"
    )
    batch_time = facts.batch_callbacks
    if batch_time and batch_time.step_seconds > 0:
        held = (batch_time.seconds + batch_time.save_seconds) / batch_time.step_seconds
        if held >= BATCH_CALLBACKS_SHARE:
            return  # not TensorFlow math: the callbacks (or their saves) hold the steps
        if held >= CALLBACKS_MENTION_SHARE:
            evidence += f", batch-end callbacks {pct(held)} of it"
    if cpu is not None:
        evidence += f"; the run averaged {cpu:.0f}% CPU ({cores(cpu / 100)})"
    yield Finding(
        rule="compute_bound",
        severity="info",
        title=f"Compute-bound{on}: the step is TensorFlow math",
        evidence=evidence,
        cause="the input keeps up; the training step's own computation sets the pace",
        fix=(
            "more cores or a GPU would help; or less math per step: mixed precision "
            "keras.mixed_precision.set_global_policy('mixed_bfloat16'), XLA "
            "model.compile(..., jit_compile=True), a smaller model"
        ),
        span=facts.window,
        impact=1.0 - fraction,
    )
