"""compare(): the environment diff, workload ratios and the written explanation, on
synthetic records built from real Sample objects."""

from __future__ import annotations

import json

import pytest

import synthetic as S
from tfres.comparison.compare import Comparison, compare
from tfres.comparison.explanation import capacity

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel


def bench_pair(fp_b: dict, *, b_seconds: float = 3.1, b_cpu: float = 99.0, other_b: float = 0.0):  # noqa: ANN201
    a = S.record(fp=S.fingerprint(), samples_=S.samples(60, process_cpu=195), kind="bench")
    b = S.record(
        fp=fp_b, samples_=S.samples(60, process_cpu=b_cpu, other_cores=other_b), kind="bench"
    )
    a.workloads = [
        S.workload("cpu_matmul", 1.0, start=0, end=5.9, variant="n=2000", params={"n": 2000})
    ]
    b.workloads = [
        S.workload("cpu_matmul", b_seconds, start=0, end=5.9, variant="n=2000", params={"n": 2000})
    ]
    return a, b


def test_blas_threads_explain_a_slower_matmul() -> None:
    a, b = bench_pair(S.fingerprint(env={"OMP_NUM_THREADS": "1"}))
    c = compare(a, b)
    (w,) = c.workloads
    assert w.time_ratio == pytest.approx(3.1) and w.throughput_ratio == pytest.approx(1 / 3.1)
    (e,) = c.explanations
    assert e.slower == "B" and e.ratio == pytest.approx(3.1) and e.causes[0] == "threads.blas"
    assert e.text.startswith(
        "cpu_matmul n=2000 is 3.1x slower on B: "
        "B's BLAS runs 1 thread (OMP_NUM_THREADS=1) against 2 on A"
    )
    assert "accounts for up to 2.0x" in e.text and "99% CPU against 195% on A" in e.text
    assert [i.key for i in c.changed] == ["threads.blas", "env.OMP_NUM_THREADS"]


def test_the_faster_side_can_be_b() -> None:
    b, a = bench_pair(S.fingerprint(env={"OMP_NUM_THREADS": "1"}))
    (e,) = compare(a, b).explanations
    assert e.slower == "A" and "A's BLAS runs 1 thread" in e.text


def test_affinity_explains_a_slower_run() -> None:
    a = S.record(samples_=S.samples(60, process_cpu=190))
    b = S.record(fp=S.fingerprint(affinity=[0]), samples_=S.samples(60, process_cpu=99))
    a.steps, b.steps = S.steps(duration=0.05), S.steps(duration=0.1)
    c = compare(a, b)
    assert (
        c.run is not None
        and c.run.name == "run (median step)"
        and c.run.time_ratio == pytest.approx(2.0)
    )
    (e,) = c.explanations
    assert e.causes[0] == "cpu.affinity"
    assert "B may use 1 core against 2 on A (its CPU affinity is 0 against 0-1 on A)" in e.text
    assert c.changed[0].key == "cpu.usable_cores"


def test_cgroup_quota_is_named_as_the_constraint() -> None:
    a = S.record(samples_=S.samples(60, process_cpu=190))
    b = S.record(fp=S.fingerprint(quota=1.0), samples_=S.samples(60, process_cpu=99))
    a.elapsed_seconds, b.elapsed_seconds = 10.0, 19.0
    (e,) = compare(a, b).explanations
    assert e.causes[0] == "cpu.quota" and "cgroup CPU quota is 1 cores against none" in e.text


def test_background_load_explains_and_names_the_hog() -> None:
    fp_b = S.fingerprint(top_cpu=[{"pid": 5, "name": "yes", "cpu_percent": 100.0}])
    a, b = bench_pair(fp_b, b_seconds=1.6, b_cpu=100.0, other_b=1.0)
    c = compare(a, b)
    (e,) = c.explanations
    assert e.causes[0] == "load.background"
    assert (
        "other processes took 1.0 cores on B while it ran, against 0.0 on A (busiest: yes 100%)"
        in e.text
    )
    assert any(i.key == "load.background" for i in c.changed)


def test_no_environment_difference_is_said_plainly() -> None:
    a, b = bench_pair(S.fingerprint(), b_seconds=1.5, b_cpu=195.0)
    (e,) = compare(a, b).explanations
    assert e.causes == () and "no recorded environment difference accounts for it" in e.text


def test_small_differences_are_not_explained() -> None:
    a, b = bench_pair(S.fingerprint(env={"OMP_NUM_THREADS": "1"}), b_seconds=1.2)
    assert compare(a, b).explanations == ()


def test_workloads_in_one_record_only_are_named_and_parameters_paired() -> None:
    a, b = bench_pair(S.fingerprint())
    a.workloads.append(S.workload("train_small", 2.0, start=0, end=2, device="CPU:0"))
    b.workloads.append(S.workload("input_pipeline", 2.0, start=0, end=2, device="CPU:0"))
    b.workloads.append(S.workload("batch_sweep", 1.0, start=0, end=1, params={"batch": 64}))
    a.workloads.append(S.workload("batch_sweep", 1.0, start=0, end=1, params={"batch": 32}))
    c = compare(a, b)
    assert c.only_in_a == ("train_small on CPU:0",)
    assert c.only_in_b == ("input_pipeline on CPU:0",)
    (sweep,) = [w for w in c.workloads if w.name == "batch_sweep"]
    assert sweep.note is not None and "parameters differ" in sweep.note


def test_failed_workloads_are_not_compared() -> None:
    a, b = bench_pair(S.fingerprint())
    b.workloads[0]["error"] = "out of memory"
    c = compare(a, b)
    assert c.workloads == () and c.only_in_a == ("cpu_matmul n=2000 on host",)


def test_gpu_workload_is_linked_to_the_gpu_and_driver() -> None:
    gpu_a = [
        {
            "index": 0,
            "name": "NVIDIA A100",
            "memory_total_bytes": 40 * S.GiB,
            "driver_version": "550.54",
        }
    ]
    gpu_b = [
        {
            "index": 0,
            "name": "NVIDIA T4",
            "memory_total_bytes": 16 * S.GiB,
            "driver_version": "535.1",
        }
    ]
    a = S.record(fp=S.fingerprint(gpus=gpu_a, tf_gpus=1))
    b = S.record(fp=S.fingerprint(gpus=gpu_b, tf_gpus=1))
    a.workloads = [S.workload("tf_matmul", 0.01, start=0, end=1, device="GPU:0")]
    b.workloads = [S.workload("tf_matmul", 0.05, start=0, end=1, device="GPU:0")]
    c = compare(a, b)
    (e,) = c.explanations
    assert e.causes[:3] == ("gpu.models", "gpu.memory", "gpu.driver")
    assert "GPU NVIDIA T4 on B against NVIDIA A100" in e.text
    assert [i.category for i in c.changed][:2] == ["gpu", "gpu"]  # GPU first: most impact


def test_peak_memory_difference_is_explained() -> None:
    a, b = bench_pair(S.fingerprint(tf_version="2.20.0"), b_seconds=1.0, b_cpu=195.0)
    b.samples = S.samples(60, process_cpu=195, rss=2 * S.GiB)
    (e,) = compare(a, b).explanations
    assert e.metric == "memory" and e.ratio == pytest.approx(4.1, abs=0.01)
    assert "tf.version" in e.causes and "peaks 4.1x higher in memory on B" in e.text


def test_records_of_another_tfres_version_compare_what_they_share() -> None:
    a, b = bench_pair(S.fingerprint(env={"OMP_NUM_THREADS": "1"}))
    b.tfres_version = "0.0.9"
    del b.fingerprint["blas"], b.fingerprint["load"]
    c = compare(a, b)
    assert any("different tfres versions (A 0.1.0, B 0.0.9)" in n for n in c.notes)
    assert any("B's record has no blas, load section(s)" in n for n in c.notes)
    assert c.workloads and c.explanations  # still compared: the env var is there
    blas = next(i for i in c.environment if i.key == "blas.library")
    assert blas.missing and not blas.changed


def test_unchanged_items_fold_and_the_dict_round_trips() -> None:
    a, b = bench_pair(S.fingerprint(env={"OMP_NUM_THREADS": "1"}))
    c = compare(a, b)
    assert {i.key for i in c.unchanged} >= {"cpu.model", "memory.total", "tf.version"}
    assert not {i.key for i in c.unchanged} & {i.key for i in c.changed}
    d = json.loads(json.dumps(c.to_dict()))
    assert Comparison.from_dict(d) == c
    assert d["workloads"][0]["time_ratio"] == pytest.approx(3.1)


def test_records_without_anything_in_common() -> None:
    a = S.record(fp=S.fingerprint(), samples_=[])
    b = S.record(fp=S.fingerprint(cores=4), samples_=[])
    a.elapsed_seconds = b.elapsed_seconds = None
    c = compare(a, b)
    assert c.run is None and c.explanations == ()
    assert any("share no workload" in n for n in c.notes)
    assert c.changed[0].key == "cpu.usable_cores"


@pytest.mark.parametrize(
    ("cores", "threads", "bg", "expected"),
    [(2, None, 0, 2.0), (2, 1, 0, 1.0), (1, None, 0, 1.0), (2, None, 1.0, 4 / 3), (2, 8, 0, 2.0)],
)
def test_capacity_model(cores: float, threads: int | None, bg: float, expected: float) -> None:
    assert capacity(cores, threads, bg) == pytest.approx(expected)


def test_a_bench_and_a_run_record_are_not_timed_against_each_other() -> None:
    a, _ = bench_pair(S.fingerprint())
    b = S.record(samples_=S.samples(60))
    b.steps = S.steps()
    c = compare(a, b)
    assert c.run is None and c.workloads == () and c.only_in_a
    assert any("A is a bench record and B a run record" in n for n in c.notes)
