"""Phase-aware diagnosis over records shaped like tfres run's hook writes them: start-up
gets its own line and no training advice; evaluation and saves are named when they dominate
the work; a clean training run says it is compute-bound; evaluate steps are not training."""

from __future__ import annotations

import synthetic as S
from tfres.diagnosis.diagnose import diagnose
from tfres.diagnosis.facts import run_facts
from tfres.record import Record
from tfres.timeline import Phase


def _rules(record: Record) -> list[str]:
    return [f.rule for f in diagnose(record)]


def _hooked(*phases: tuple[str, float, float], n: int = 100, cpu: float = 100.0) -> Record:
    r = S.record(samples_=S.samples(n, process_cpu=cpu))
    r.phases = [Phase(name, a, b) for name, a, b in phases]
    return r


def test_startup_only_gets_its_line_and_no_training_advice() -> None:
    # one core busy the whole time: without phases this is "one core pegged, use @tf.function"
    r = _hooked(("import tensorflow", 0.1, 6.5), ("start-up", 0.05, 9.9))
    r.notes.append("no steps: TensorFlow was imported but no Keras fit or tf.function ran")
    found = diagnose(r)
    assert found[0].rule == "startup" and found[0].severity == "warning"
    assert found[0].title == "TensorFlow import and start-up: 9.9 s, 100% of this run"
    assert "TensorFlow's import 6.4 s" in found[0].evidence
    assert not {"cpu_single_core", "cpu_bound", "compute_bound"} & set(_rules(r))
    assert run_facts(r).window is None


def test_the_same_samples_without_phases_still_get_the_cpu_rule() -> None:
    assert "cpu_single_core" in _rules(S.record(samples_=S.samples(100, process_cpu=100.0)))


def test_startup_is_information_when_the_training_is_longer() -> None:
    r = _hooked(("import tensorflow", 0.1, 2.0), ("set-up", 2.0, 3.0), ("fit", 3.0, 9.9))
    r.steps = [dict(s, kind="fit") for s in S.steps(60, duration=0.1, wait=0.05, t0=3.0)]
    found = diagnose(r)
    assert found[0].rule == "input_bound"
    startup = next(f for f in found if f.rule == "startup")
    assert startup.severity == "info"
    # the window is the training steps after the first one
    assert run_facts(r).window == (3.1, 9.0)


def test_a_long_data_preparation_before_a_steady_training_leaves_the_training_on_top() -> None:
    # unseen15/input_jsonl_ecommerce: 14 s writing its data, then 4.5 s of fit (1.5 s of it
    # the first step), each step waiting for input: start-up is most of the run (by twice the
    # steady work), but the run trained for 13% of it, and its steps are the story
    r = _hooked(
        ("import tensorflow", 0.1, 2.0),
        ("set-up", 2.0, 16.1),
        ("fit", 16.1, 20.6),
        ("first step", 16.1, 17.6),
    )
    r.elapsed_seconds = 22.9
    r.steps = [dict(s, kind="fit") for s in S.steps(60, duration=0.05, wait=0.025, t0=17.6)]
    found = diagnose(r)
    assert found[0].rule == "input_bound"
    startup = next(f for f in found if f.rule == "startup")
    assert startup.severity == "info"
    assert startup.title == "TensorFlow import and start-up: 16.1 s, 70% of this run"


def test_a_smoke_fit_of_a_few_steps_is_still_the_start_ups_story() -> None:
    # heldout/startup_smoke_fit: two tiny batches after 6 s of start-up
    r = _hooked(
        ("import tensorflow", 0.1, 4.0),
        ("set-up", 4.0, 6.0),
        ("fit", 6.0, 7.3),
        ("first step", 6.0, 7.2),
    )
    r.elapsed_seconds = 7.5
    r.steps = [dict(s, kind="fit") for s in S.steps(2, duration=0.05, wait=0.0, t0=7.2)]
    found = diagnose(r)
    assert found[0].rule == "startup" and found[0].severity == "warning"


def test_a_run_that_only_predicts_is_not_told_to_evaluate_less() -> None:
    # unseen16/startup_inspect_insurance_claims: start-up, then predicts on a 16,384-row
    # sample; the work after start-up is all prediction, as it is in any predict-only run
    r = _hooked(
        ("import tensorflow", 0.1, 3.2),
        ("set-up", 3.2, 3.4),
        ("predict", 3.4, 4.4),
        ("first predict step", 3.4, 3.5),
        ("predict", 4.7, 5.1),
    )
    r.elapsed_seconds = 6.4
    found = diagnose(r)
    assert "phase_share" not in _rules(r)
    assert found[0].rule == "startup" and found[0].severity == "warning"


def test_a_program_without_tensorflow_gets_no_startup_line() -> None:
    r = _hooked(("start-up", 0.05, 9.9))
    assert "startup" not in _rules(r)


def test_evaluation_and_saves_are_named_when_they_dominate() -> None:
    r = _hooked(
        ("import tensorflow", 0.1, 1.0),
        ("set-up", 1.0, 1.5),
        ("fit", 1.5, 3.5),
        ("evaluate", 3.5, 7.5),
        ("model save", 7.5, 8.0),
    )
    found = {f.rule: f for f in diagnose(r)}
    assert found["phase_share"].title == "Evaluation and prediction take 62% of the work"
    # 0.5 s of saves in 6.5 s of work: not named
    assert sum(f.rule == "phase_share" for f in diagnose(r)) == 1


def test_evaluate_steps_are_not_training_steps() -> None:
    r = _hooked(("import tensorflow", 0.1, 1.0), ("set-up", 1.0, 1.5), ("evaluate", 1.5, 9.0))
    r.steps = [dict(s, kind="evaluate") for s in S.steps(40, wait=0.09, t0=1.5)]
    facts = run_facts(r)
    assert facts.input_wait_fraction is None and facts.window is None
    assert "input_bound" not in _rules(r)


def test_a_clean_training_run_says_what_bounds_it() -> None:
    r = _hooked(("import tensorflow", 0.1, 1.0), ("set-up", 1.0, 1.5), ("fit", 1.5, 9.9), cpu=150)
    r.steps = [dict(s, kind="fit") for s in S.steps(80, duration=0.1, wait=0.001, t0=1.5)]
    found = diagnose(r)
    compute = next(f for f in found if f.rule == "compute_bound")
    assert compute.title == "Compute-bound on 2 cores: the step is TensorFlow math"
    assert "input wait 1% of step time" in compute.evidence


def test_saves_are_weighed_against_the_steady_work_not_the_first_steps_tracing() -> None:
    # fit 1.5-10.5 s: a 3 s first step (tracing), 3 s of steps, 3 s of checkpoint saves
    r = _hooked(
        ("import tensorflow", 0.1, 1.0),
        ("set-up", 1.0, 1.5),
        ("fit", 1.5, 10.5),
        ("first step", 1.5, 4.5),
        *[("checkpoint save", 4.5 + 0.75 * i, 4.5 + 0.75 * i + 0.375) for i in range(8)],
    )
    found = {f.rule: f for f in diagnose(r)}
    # 3 s of saves in 6 s of steady work: 50%; against all 9 s of fit it would be 33%
    assert found["phase_share"].title == "Model and checkpoint saves take 50% of the work"
    assert "after start-up and the first calls" in found["phase_share"].evidence


def test_saves_beside_a_long_steady_training_are_not_named() -> None:
    r = _hooked(
        ("import tensorflow", 0.1, 1.0),
        ("set-up", 1.0, 1.5),
        ("fit", 1.5, 19.5),
        ("first step", 1.5, 2.0),
        ("checkpoint save", 10.0, 13.0),
    )
    assert "phase_share" not in _rules(r)


def test_one_batch_predicts_are_tracing_the_start_up_not_evaluation() -> None:
    # a model zoo check: build each model, predict one batch; each predict is its first batch,
    # which traces the model's predict function (unseen7/startup_model_zoo_crop_segmentation)
    predicts = [(10.5, 0.4), (11.0, 1.0), (12.2, 0.8), (13.2, 2.2), (15.6, 1.9), (17.7, 1.7)]
    r = _hooked(
        ("import tensorflow", 0.1, 5.3),
        ("set-up", 5.3, 10.5),
        *[("predict", a, a + d + 0.01) for a, d in predicts],
        *[("first predict step", a, a + d) for a, d in predicts],
        ("after training", 19.5, 19.5),
    )
    r.elapsed_seconds = 20.9
    found = diagnose(r)
    assert found[0].rule == "startup" and found[0].severity == "warning"
    assert found[0].title == "TensorFlow import, start-up and first calls: 18.5 s, 89% of this run"
    assert "first calls of fit/evaluate/predict (tracing) 8.0 s" in found[0].evidence
    assert "phase_share" not in _rules(r)


def test_evaluation_is_weighed_without_its_first_batchs_tracing() -> None:
    r = _hooked(
        ("import tensorflow", 0.1, 1.0),
        ("set-up", 1.0, 1.5),
        ("fit", 1.5, 5.5),
        ("first step", 1.5, 2.5),
        ("evaluate", 5.5, 9.5),
        ("first evaluate step", 5.5, 6.5),
    )
    found = {f.rule: f for f in diagnose(r)}
    # steady work: 3 s of training and 3 s of evaluation (each less its 1 s first call)
    assert found["phase_share"].title == "Evaluation and prediction take 50% of the work"
    assert "3.0 s of 6.0 s of work" in found["phase_share"].evidence


def test_a_custom_loops_own_evaluation_is_named_with_a_loop_fix() -> None:
    # unseen26/eval_churn_telecom: a tf.function loop whose epochs end in a Python loop over
    # the test set (eager model calls, keras.metrics); the hook reads the pauses between its
    # steps, and the one after the last, as "loop evaluation" inside the training loop's span
    r = _hooked(
        ("import tensorflow", 0.1, 3.0),
        ("set-up", 3.0, 3.5),
        ("first step", 3.5, 4.0),
        ("training loop", 3.5, 14.0),
        ("loop evaluation", 5.0, 8.0),
        ("loop evaluation", 9.5, 12.5),
        ("loop evaluation", 14.0, 17.0),
        cpu=150,
    )
    r.steps = [dict(s, kind="loop") for s in S.steps(80, duration=0.01, wait=0.0, t0=3.5)]
    found = {f.rule: f for f in diagnose(r)}
    share = found["phase_share"]
    # 9 s of evaluation in 13 s of work (the loop's 10.5 s and the last evaluation's 3 s,
    # less the first step's 0.5 s); the training is the loop less its pauses: 4.5 s
    assert share.title == "Evaluation and prediction take 69% of the work"
    assert "(training 4.5 s)" in share.evidence
    assert "@tf.function eval step" in share.fix and "validation_freq" not in share.fix
    assert diagnose(r)[0].rule == "phase_share"


def _fit_with_epoch_callbacks(*inside: str, phase: str = "epoch-end callbacks") -> Record:
    """A 9 s fit (1.5-10.5) of 3 epochs of 1 s, each followed by 2 s of the program's own
    epoch-end callbacks (phase ``phase``) holding 0.2 s of each phase named in ``inside``."""
    phases: list[tuple[str, float, float]] = [
        ("import tensorflow", 0.1, 1.0),
        ("set-up", 1.0, 1.5),
        ("fit", 1.5, 10.5),
    ]
    for epoch in range(3):
        start = 1.5 + 3 * epoch
        phases.append((f"fit epoch {epoch}", start, start + 1.0))
        phases.append((phase, start + 1.0, start + 3.0))
        for i, name in enumerate(inside):
            phases.append((name, start + 1.2 + 0.3 * i, start + 1.4 + 0.3 * i))
    return _hooked(*phases)


def test_an_epoch_end_callback_that_predicts_is_evaluation_all_through() -> None:
    """The predict calls are 0.6 s of 9 s; the callbacks around them, computing their metric
    in NumPy, 6 s: all of it is the program's evaluation."""
    found = {f.rule: f for f in diagnose(_fit_with_epoch_callbacks("predict"))}
    share = found["phase_share"]
    assert share.title == "Evaluation and prediction take 67% of the work"
    assert "5.4 s more in the 3 epoch-end callback(s) that evaluate or predict" in share.evidence


def test_epoch_end_callbacks_that_neither_evaluate_nor_predict_are_not_evaluation() -> None:
    assert "phase_share" not in _rules(_fit_with_epoch_callbacks())
    # and a save in them is a save: 0.6 s of 9 s, not evaluation either
    assert "phase_share" not in _rules(_fit_with_epoch_callbacks("model save"))


def test_epoch_end_callbacks_that_ran_the_model_themselves_are_evaluation_all_through() -> None:
    """The hook names them ``epoch-end evaluation`` (MC-dropout passes in a tf.function of
    the callback's own, no predict): all 6 s of 9 are evaluation, less a save inside."""
    found = {f.rule: f for f in diagnose(_fit_with_epoch_callbacks(phase="epoch-end evaluation"))}
    assert found["phase_share"].title == "Evaluation and prediction take 67% of the work"
    assert "6.0 s more in the 3 epoch-end callback(s)" in found["phase_share"].evidence
    saving = _fit_with_epoch_callbacks("model save", phase="epoch-end evaluation")
    assert _rules(saving)[0] == "phase_share"
    assert diagnose(saving)[0].title == "Evaluation and prediction take 60% of the work"


def test_saves_inside_an_evaluating_callback_are_not_counted_as_evaluation() -> None:
    found = {f.rule: f for f in diagnose(_fit_with_epoch_callbacks("predict", "model save"))}
    # 3 x (2 s - 0.2 s of save) = 5.4 s of evaluation in 9 s
    assert found["phase_share"].title == "Evaluation and prediction take 60% of the work"
