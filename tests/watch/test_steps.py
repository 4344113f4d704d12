"""Step attribution: the timed iterator and measure_input_wait attribute a known, injected
input delay correctly (generous bands: this checks attribution, not speed)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tfres.diagnosis.diagnose import diagnose
from tfres.record import Record
from tfres.watch.steps import (
    STEPS_FILE_ENV,
    InputWaitMeasurement,
    StepTimer,
    measure_input_wait,
    read_steps_file,
    timed,
)


def spin(seconds: float) -> None:
    """Compute of a known duration that stays on the CPU (like a training step)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def slow_items(n: int, delay: float):  # noqa: ANN201
    for i in range(n):
        time.sleep(delay)
        yield i


def test_timed_splits_each_step_into_wait_and_compute() -> None:
    timer = StepTimer(steps_file=None)
    seen = [x for x in timer.timed(slow_items(6, 0.02), epoch=3) if spin(0.02) is None]
    assert seen == list(range(6))
    assert [s["step"] for s in timer.steps] == list(range(6))
    assert all(s["epoch"] == 3 for s in timer.steps)
    for s in timer.steps:
        assert 0.015 <= s["input_wait_seconds"] <= s["duration_seconds"]
        assert s["duration_seconds"] >= 0.035
    assert timer.input_wait_fraction == pytest.approx(0.5, abs=0.15)
    starts = [s["t_seconds"] for s in timer.steps]
    assert starts == sorted(starts)


def test_breaking_out_of_the_loop_closes_the_last_step() -> None:
    timer = StepTimer(steps_file=None)
    for x in timer.timed(range(100)):
        if x == 4:
            break
    assert len(timer.steps) == 5


def test_steps_go_to_the_file_named_by_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "steps.jsonl"
    monkeypatch.setenv(STEPS_FILE_ENV, str(path))
    t0 = time.monotonic()
    for _ in timed(slow_items(3, 0.01)):
        pass
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 3 and all("t_monotonic" in line and "t_wall" in line for line in lines)
    with path.open("a") as fh:
        fh.write('{"duration_seconds": 0.1, "t_sec')  # a writer killed mid-line
    steps = read_steps_file(path, t0_monotonic=t0)
    assert len(steps) == 3
    assert 0 <= steps[0]["t_seconds"] < 1.0
    assert set(steps[0]) == {"t_seconds", "duration_seconds", "epoch", "step", "input_wait_seconds"}
    assert read_steps_file(tmp_path / "missing.jsonl") == []


def test_steps_join_a_monitor_record_on_its_timeline() -> None:
    import tfres

    with tfres.monitor(label="steps", store=False, interval=0.05) as m:
        time.sleep(0.05)
        for _ in timed(slow_items(4, 0.01), monitor=m, steps_file=None):
            spin(0.01)
    steps = m.record.steps
    assert len(steps) == 4 and all("input_wait_seconds" in s for s in steps)
    assert steps[0]["t_seconds"] >= 0.04  # on the monitor's clock, not the timer's
    assert steps[-1]["t_seconds"] <= m.record.elapsed_seconds


def test_measure_input_wait_validates_its_arguments() -> None:
    with pytest.raises(ValueError, match="exactly one of step= .* or model="):
        measure_input_wait([1, 2])
    with pytest.raises(ValueError, match="steps and repeats must be >= 1"):
        measure_input_wait([1, 2], lambda b: None, steps=0)
    with pytest.raises(ValueError, match="the dataset is empty"):
        measure_input_wait([], lambda b: None)


def test_measure_input_wait_on_a_python_iterable() -> None:
    class Slow:
        def __iter__(self):  # noqa: ANN204
            return slow_items(12, 0.02)

    m = measure_input_wait(Slow(), lambda b: spin(0.02), steps=8, warmup=1)
    assert m.input_wait_fraction == pytest.approx(0.5, abs=0.15)
    assert m.compute_seconds_per_step == pytest.approx(0.02, abs=0.01)
    assert m.band == "high"
    assert InputWaitMeasurement.from_dict(m.to_dict()) == m
    r = Record()
    m.save_to(r)
    (f,) = [f for f in diagnose(r) if f.rule == "input_bound"]
    assert f.severity == "warning"


@pytest.fixture(scope="module")
def tf_delay_pipeline():  # noqa: ANN201
    """A real tf.data pipeline with a per-element sleep (1 element per batch), no prefetch."""
    tf = pytest.importorskip("tensorflow")
    delay = 0.03

    def gen():  # noqa: ANN202
        i = 0
        while True:
            time.sleep(delay)
            yield i
            i += 1

    ds = (
        tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.int64))
        .batch(1)
        .take(10)
    )
    options = tf.data.Options()
    options.experimental_optimization.inject_prefetch = False
    options.autotune.enabled = False
    return ds.with_options(options), delay


@pytest.mark.parametrize("compute", [0.03, 0.09])
def test_timed_attributes_a_tf_data_delay(tf_delay_pipeline, compute: float) -> None:  # noqa: ANN001
    ds, delay = tf_delay_pipeline
    timer = StepTimer(steps_file=None)
    for _batch in timer.timed(ds):
        spin(compute)
    truth = delay / (delay + compute)
    assert len(timer.steps) == 10
    # tf.data adds its own (small) cost per element on top of the injected sleep
    assert timer.input_wait_fraction == pytest.approx(truth, abs=0.1)


def test_measure_input_wait_on_tf_data_like_the_guide(tf_delay_pipeline) -> None:  # noqa: ANN001
    ds, delay = tf_delay_pipeline
    m = measure_input_wait(ds, lambda b: spin(0.03), steps=6, warmup=1)
    assert m.input_seconds_per_step == pytest.approx(delay, abs=0.02)
    assert m.input_wait_fraction == pytest.approx(0.5, abs=0.15)


def test_measure_input_wait_with_a_keras_model() -> None:
    tf = pytest.importorskip("tensorflow")
    import numpy as np

    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x = np.ones((64, 4), np.float32)
    ds = tf.data.Dataset.from_tensor_slices((x, x[:, :1])).batch(8)
    m = measure_input_wait(ds, model=model, steps=4, warmup=1)
    assert 0.0 <= m.input_wait_fraction <= 1.0
    assert m.full_seconds_per_step > 0 and m.compute_seconds_per_step > 0


def test_tfres_steps_is_reachable_from_the_package_without_tensorflow(python: str) -> None:
    import subprocess

    code = (
        "import sys, tfres; assert callable(tfres.steps.timed); print('tensorflow' in sys.modules)"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
