"""Diagnosis rules over synthetic records built from real Sample objects: each rule fires
on its pattern, stays quiet on the other side of its threshold, and the top finding is
the right one."""

from __future__ import annotations

import logging
import math

import pytest

import synthetic as S
from tfres.diagnosis.diagnose import RULES, Finding, diagnose, top_finding
from tfres.diagnosis.facts import run_facts
from tfres.diagnosis.rules import cpu, gpu, input, memory
from tfres.timeline import GpuSample

MiB = 2**20


def rules_of(findings: list[Finding]) -> list[str]:
    return [f.rule for f in findings]


# -- the Finding contract -------------------------------------------------------------------


def test_finding_to_dict_has_exactly_the_contract_keys() -> None:
    f = Finding("r", "warning", "t", "e", "c", "x", span=(1.23456, 2.0), impact=0.5)
    d = f.to_dict()
    assert list(d) == ["rule", "severity", "title", "evidence", "span", "cause", "fix"]
    assert d["span"] == [1.235, 2.0]
    assert Finding.from_dict(d) == Finding("r", "warning", "t", "e", "c", "x", span=(1.235, 2.0))


def test_finding_rejects_an_unknown_severity() -> None:
    with pytest.raises(ValueError, match="severity must be one of"):
        Finding("r", "bad", "t", "e", "c", "x")


def test_empty_record_gives_no_findings() -> None:
    assert diagnose(S.record(fp={}, samples_=[])) == []


def test_a_failing_rule_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(facts):  # noqa: ANN001, ANN202
        raise RuntimeError("boom")

    r = S.record(samples_=S.samples(process_cpu=190))
    with caplog.at_level(logging.WARNING, logger="tfres"):
        found = diagnose(r, rules=[broken, cpu.cpu_bound])
    assert rules_of(found) == ["cpu_bound"]
    assert "broken failed: boom" in caplog.text


def test_findings_sort_by_severity_then_risk_then_impact() -> None:
    r = S.record(samples_=S.samples(process_cpu=100, rss=int(0.95 * 24 * S.GiB)))
    r.steps = S.steps(wait=0.03)  # 30% input wait: a warning
    r.exit_code = 137
    found = diagnose(r)
    severities = [f.severity for f in found]
    assert severities == sorted(severities, key=["critical", "warning", "info"].index)
    assert found[0].rule == "out_of_memory"
    for severity in ("critical", "warning", "info"):
        same = [f for f in found if f.severity == severity]
        risks = [f.risk for f in same]
        assert risks == sorted(risks, reverse=True)  # what may fail before what is slow
        for risk in (True, False):
            impacts = [f.impact for f in same if f.risk is risk]
            assert impacts == sorted(impacts, reverse=True)


def test_rules_list_is_pluggable() -> None:
    assert cpu.cpu_bound in RULES and input.input_bound in RULES
    assert len(RULES) == len(set(RULES))


# -- input-bound: the TF Profiler's 5% / 20% bands ------------------------------------------


@pytest.mark.parametrize(
    ("wait", "severity"),
    [(0.020, "warning"), (0.0199, "info"), (0.005, "info"), (0.0049, None), (0.0, None)],
)
def test_input_bound_bands(wait: float, severity: str | None) -> None:
    r = S.record(samples_=S.samples(process_cpu=60))
    r.steps = S.steps(duration=0.1, wait=wait)
    found = [f for f in diagnose(r) if f.rule == "input_bound"]
    if severity is None:
        assert not found
        return
    assert found[0].severity == severity
    assert f"{wait / 0.1 * 100:.0f}%" in found[0].title
    assert "prefetch" in found[0].fix
    assert found[0].span == (0.5, 0.5 + 40 * 0.1)


def test_input_bound_is_the_top_finding_of_an_input_bound_run() -> None:
    r = S.record(samples_=S.samples(process_cpu=120))
    r.steps = S.steps(wait=0.05)
    top = top_finding(r)
    assert top is not None and top.rule == "input_bound"
    assert "50%" in top.evidence and "40 steps" in top.evidence


def test_input_wait_is_a_share_of_the_window_steps_less_what_the_profiler_added() -> None:
    # 0.1 s steps of the window, 0.01 s of each the profiler's (already out of the wait):
    # 0.045 s of 0.09 s waits, 50%, where the steps' own durations would say 45%
    r = S.record(samples_=S.samples(process_cpu=60))
    r.steps = S.steps(duration=0.1, wait=0.045)
    for step in r.steps:
        step["profiler_seconds"] = 0.01
    assert run_facts(r).input_wait_fraction == pytest.approx(0.5)
    (f,) = [f for f in diagnose(r) if f.rule == "input_bound"]
    assert "50%" in f.title and "that the profiler added to these steps" in f.evidence
    for step in r.steps:  # without the profiler's cost: the durations as they are
        del step["profiler_seconds"]
    assert run_facts(r).input_wait_fraction == pytest.approx(0.45)


def test_input_bound_reads_a_measure_input_wait_result() -> None:
    r = S.record(samples_=S.samples(process_cpu=60))
    r.extra["input_wait"] = {
        "input_wait_fraction": 0.4,
        "full_seconds_per_step": 0.1,
        "compute_seconds_per_step": 0.06,
    }
    (f,) = [f for f in diagnose(r) if f.rule == "input_bound"]
    assert (
        f.severity == "warning" and "40%" in f.title and "tf.data performance guide" in f.evidence
    )


# -- CPU ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("proc", "fires"), [(160.0, True), (159.0, False)])
def test_cpu_bound_at_80_percent_of_usable_cores(proc: float, fires: bool) -> None:
    found = diagnose(S.record(samples_=S.samples(process_cpu=proc)))
    assert ("cpu_bound" in rules_of(found)) is fires
    if fires:
        (f,) = [f for f in found if f.rule == "cpu_bound"]
        assert f.severity == "info" and "all 2 cores" in f.title


@pytest.mark.parametrize(
    ("proc", "other", "fires"), [(151.0, 0.44, True), (130.0, 0.4, False), (99.0, 0.9, False)]
)
def test_cpu_bound_on_a_saturated_machine(proc: float, other: float, fires: bool) -> None:
    # >= 50% of the cores for the run, >= 90% busy with the others: all the CPU it could get
    found = [
        f
        for f in diagnose(S.record(samples_=S.samples(process_cpu=proc, other_cores=other)))
        if f.rule == "cpu_bound"
    ]
    assert bool(found) is fires
    if fires:
        assert "all the CPU it could get" in found[0].title and "saturated" in found[0].evidence


def test_cpu_bound_is_a_warning_when_a_gpu_waits() -> None:
    gpus = [
        [GpuSample(0, util_percent=30.0, memory_used_bytes=10 * MiB, memory_total_bytes=100 * MiB)]
    ] * 50
    found = diagnose(
        S.record(fp=S.fingerprint(tf_gpus=1), samples_=S.samples(process_cpu=190, gpus=gpus))
    )
    (f,) = [f for f in found if f.rule == "cpu_bound"]
    assert f.severity == "warning" and "GPU waits" in f.cause


def test_cpu_bound_uses_the_usable_cores_not_the_logical_ones() -> None:
    # one core by affinity: 95% of one core is all of it, not "one core of two pegged"
    r = S.record(fp=S.fingerprint(affinity=[0]), samples_=S.samples(process_cpu=95))
    assert rules_of(diagnose(r)) == ["cpu_bound"]


@pytest.mark.parametrize(
    ("proc", "fires"), [(80.0, True), (120.0, True), (79.0, False), (121.0, False)]
)
def test_one_core_pegged_band(proc: float, fires: bool) -> None:
    found = diagnose(S.record(samples_=S.samples(process_cpu=proc)))
    assert ("cpu_single_core" in rules_of(found)) is fires


@pytest.mark.parametrize(
    ("phase", "words", "not_words"),
    [
        (None, "@tf.function", "torch"),
        ("PyTorch program", "DataLoader", "tf."),
        ("JAX program", "jax.jit", "@tf.function"),
    ],
)
def test_cpu_advice_speaks_the_programs_framework(phase, words, not_words) -> None:
    from tfres.timeline import Phase

    pegged = S.record(fp=S.fingerprint(cores=4), samples_=S.samples(cores=4, process_cpu=100))
    busy = S.record(samples_=S.samples(process_cpu=200))
    for r in (pegged, busy):
        if phase:  # as the start-up hook records a program on that framework
            r.phases = [Phase("start-up", 0.0, 0.2), Phase(phase, 0.2, r.samples[-1].t_seconds)]
    (single,) = [f for f in diagnose(pegged) if f.rule == "cpu_single_core"]
    (bound,) = [f for f in diagnose(busy) if f.rule == "cpu_bound"]
    assert words in single.fix and not_words not in single.fix + bound.fix
    assert phase is None or "keras" not in bound.fix


def test_thread_starved_names_the_variables_and_replaces_one_core_pegged() -> None:
    fp = S.fingerprint(env={"OMP_NUM_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1"})
    found = diagnose(S.record(fp=fp, samples_=S.samples(process_cpu=99)))
    assert found[0].rule == "threads_starved"
    assert "cpu_single_core" not in rules_of(found)
    assert (
        "TF_NUM_INTRAOP_THREADS=1" in found[0].evidence and "OMP_NUM_THREADS=1" in found[0].evidence
    )
    assert found[0].severity == "warning"


def test_thread_limit_that_does_not_bind_is_not_starvation() -> None:
    fp = S.fingerprint(env={"OMP_NUM_THREADS": "1"})
    # the run still used both cores (TensorFlow's own pool is at its default of 2)
    found = diagnose(S.record(fp=fp, samples_=S.samples(process_cpu=190)))
    assert "threads_starved" not in rules_of(found)
    # below 80% of the usable cores: the limit binds
    r = S.record(fp=fp, samples_=S.samples(process_cpu=159))
    assert "threads_starved" in rules_of(diagnose(r))
    r = S.record(fp=fp, samples_=S.samples(process_cpu=160))
    assert "threads_starved" not in rules_of(diagnose(r))


def test_thread_limit_beside_background_load_ranks_by_the_compute_it_costs() -> None:
    fp = S.fingerprint(env={"OMP_NUM_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1"})
    r = S.record(fp=fp, samples_=S.samples(process_cpu=100, other_cores=0.6))
    found = diagnose(r)
    # one thread beside 0.6 cores of others still gets its core: the setting is the loss
    assert rules_of(found) == ["threads_starved", "background_load"]
    assert "beside 0.6 cores of other processes" in found[0].evidence
    # without the setting, the same neighbours cost the run a third of its compute
    r = S.record(samples_=S.samples(process_cpu=130, other_cores=1.0))
    assert rules_of(diagnose(r)) == ["background_load", "cpu_bound"]


def test_a_thread_setting_that_costs_little_is_not_blamed() -> None:
    # 15 BLAS threads on 16 cores: at most 1/16 of the compute
    fp = S.fingerprint(cores=16, env={"OMP_NUM_THREADS": "15"})
    r = S.record(fp=fp, samples_=S.samples(cores=16, process_cpu=800))
    assert "threads_starved" not in rules_of(diagnose(r))
    fp = S.fingerprint(cores=16, env={"OMP_NUM_THREADS": "14"})  # 2/16 = 12.5%
    r = S.record(fp=fp, samples_=S.samples(cores=16, process_cpu=800))
    assert "threads_starved" in rules_of(diagnose(r))


def test_a_run_alternating_waits_and_multicore_compute_is_not_gil_bound() -> None:
    cpu = [190.0, 10.0] * 25  # mean 100%, but bursts on both cores
    assert "cpu_single_core" not in rules_of(
        diagnose(S.record(samples_=S.samples(process_cpu=cpu)))
    )
    r = S.record(samples_=S.samples(process_cpu=100))
    r.steps = S.steps(n=45, duration=0.1, wait=0.03, t0=0.0)  # 30% input wait
    assert rules_of(diagnose(r)) == ["input_bound"]


def test_oversubscription_under_a_cgroup_quota() -> None:
    # TensorFlow sizes its pool by the affinity cores (2); the quota allows 1
    found = diagnose(S.record(fp=S.fingerprint(quota=1.0), samples_=S.samples(process_cpu=99)))
    (f,) = [f for f in found if f.rule == "thread_oversubscription"]
    assert f.severity == "warning" and "cgroup CPU quota of 1 core" in f.evidence
    assert "OMP_NUM_THREADS=1" in f.fix


@pytest.mark.parametrize(
    ("cores", "omp", "expected"),
    [(2, "2", None), (2, "3", "warning"), (4, "4", None), (4, "5", "info"), (4, "6", "warning")],
)
def test_oversubscription_thresholds(cores: int, omp: str, expected: str | None) -> None:
    fp = S.fingerprint(cores=cores, env={"OMP_NUM_THREADS": omp})
    found = [
        f for f in diagnose(S.record(fp=fp, samples_=[])) if f.rule == "thread_oversubscription"
    ]
    assert (found[0].severity if found else None) == expected


def test_oversubscription_of_both_pools_together_is_info() -> None:
    # 4 cores: TF intra-op 4 (default) + BLAS 5 = 9 > 2 x 4; no single pool above 1.25 x 4
    fp = S.fingerprint(cores=4, env={"OPENBLAS_NUM_THREADS": "5"})
    (f,) = [
        f for f in diagnose(S.record(fp=fp, samples_=[])) if f.rule == "thread_oversubscription"
    ]
    assert f.severity == "info" and "9 compute threads" in f.title


def test_background_load_names_the_busy_processes() -> None:
    fp = S.fingerprint(
        top_cpu=[
            {"pid": 42, "name": "yes", "cpu_percent": 99.0},
            {"pid": 7, "name": "sshd", "cpu_percent": 1.0},
        ]
    )
    found = diagnose(S.record(fp=fp, samples_=S.samples(process_cpu=100, other_cores=1.0)))
    assert found[0].rule == "background_load"
    assert "yes (pid 42, 99%)" in found[0].evidence and "sshd" not in found[0].evidence
    assert "1 core of 2 cores" in found[0].title


@pytest.mark.parametrize(
    ("cores", "other", "fires"), [(2, 0.5, True), (2, 0.45, False), (8, 1.9, False), (8, 2.0, True)]
)
def test_background_load_thresholds(cores: int, other: float, fires: bool) -> None:
    r = S.record(
        fp=S.fingerprint(cores=cores),
        samples_=S.samples(cores=cores, process_cpu=100, other_cores=other),
    )
    assert ("background_load" in rules_of(diagnose(r))) is fires


def test_background_load_needs_enough_samples() -> None:
    r = S.record(samples_=S.samples(n=cpu.MIN_SAMPLES - 1, process_cpu=100, other_cores=1.0))
    assert "background_load" not in rules_of(diagnose(r))


# -- memory -------------------------------------------------------------------------------

GIB24 = 24 * S.GiB


@pytest.mark.parametrize(
    ("share", "severity"),
    [(0.90, "critical"), (0.899, "warning"), (0.75, "warning"), (0.749, None)],
)
def test_memory_pressure_near_the_ram(share: float, severity: str | None) -> None:
    rss = [S.GiB] * 49 + [math.ceil(share * GIB24)]
    found = [
        f
        for f in diagnose(S.record(samples_=S.samples(rss=rss, process_cpu=50)))
        if f.rule == "memory_pressure"
    ]
    assert (found[0].severity if found else None) == severity


def test_memory_pressure_uses_the_lowest_limit_cgroup_or_budget() -> None:
    fp = S.fingerprint(cgroup_limit=2 * S.GiB)
    (f,) = [
        f
        for f in diagnose(S.record(fp=fp, samples_=S.samples(rss=int(1.9 * S.GiB))))
        if f.rule == "memory_pressure"
    ]
    assert "cgroup memory limit" in f.title
    r = S.record(samples_=S.samples(rss=900 * MiB))
    r.control["budget"] = {"budget_bytes": 1000 * MiB}
    (f,) = [f for f in diagnose(r) if f.rule == "memory_pressure"]
    assert "memory budget" in f.title and f.severity == "critical"


def test_host_nearly_out_of_memory() -> None:
    r = S.record(samples_=S.samples(available=int(0.04 * GIB24)))
    (f,) = [f for f in diagnose(r) if f.rule == "memory_pressure"]
    assert "nearly ran out" in f.title
    r = S.record(samples_=S.samples(available=int(0.06 * GIB24)))
    assert "memory_pressure" not in rules_of(diagnose(r))


@pytest.mark.parametrize(
    ("exit_code", "end_reason"), [(137, None), (-9, None), (1, "MemoryError: out of memory")]
)
def test_out_of_memory_end_is_critical_and_first(exit_code: int, end_reason: str | None) -> None:
    r = S.record(samples_=S.samples(process_cpu=190, rss=3 * S.GiB))
    r.exit_code, r.end_reason, r.status = exit_code, end_reason, "failed"
    r.extra["oom_kills_during_run"] = 1  # the kernel's OOM killer fired during the run
    found = diagnose(r)
    assert found[0].rule == "out_of_memory" and found[0].severity == "critical"
    assert "peak RSS 3.0 GiB" in found[0].evidence


@pytest.mark.parametrize("oom_kills", [None, 0])
def test_sigkill_without_evidence_is_not_called_out_of_memory(oom_kills: int | None) -> None:
    """kill -9 or a pre-emption also gives exit 137: OOM only with evidence (issue 12, 17)."""
    r = S.record(samples_=S.samples(process_cpu=190, rss=3 * S.GiB))
    r.exit_code, r.signal, r.status = None, "SIGKILL", "partial"
    r.extra["oom_kills_during_run"] = oom_kills
    assert "out_of_memory" not in rules_of(diagnose(r))
    r.control["budget"] = {"budget_bytes": 4 * S.GiB, "cgroup_oom_kills": 1}
    assert "out_of_memory" in rules_of(diagnose(r))


def test_budget_end_is_named_as_the_budget() -> None:
    r = S.record(samples_=S.samples(rss=990 * MiB))
    r.end_reason = "memory budget exceeded: 1.0 GiB"
    r.control["budget"] = {"budget_bytes": 1024 * MiB}
    assert top_finding(r).title == "Stopped by the memory budget"  # type: ignore[union-attr]


def test_normal_exit_is_not_out_of_memory() -> None:
    r = S.record()
    r.exit_code = 0
    assert "out_of_memory" not in rules_of(diagnose(r))


@pytest.mark.parametrize(("grow", "fires"), [(64 * MiB, True), (63 * MiB, False)])
def test_swap_growth(grow: int, fires: bool) -> None:
    swap = [100 * MiB] * 25 + [100 * MiB + grow] * 25
    assert ("swap_growth" in rules_of(diagnose(S.record(samples_=S.samples(swap=swap))))) is fires


def test_memory_growth_in_a_straight_line() -> None:
    limit = 4 * S.GiB
    rss = [S.GiB + i * int(0.25 * limit / 49) for i in range(50)]  # +25% of the limit
    r = S.record(fp=S.fingerprint(ram_bytes=limit), samples_=S.samples(rss=rss))
    (f,) = [f for f in diagnose(r) if f.rule == "memory_growth"]
    assert "R^2 1.00" in f.evidence and "toward the RAM" in f.title
    flat = S.record(fp=S.fingerprint(ram_bytes=limit), samples_=S.samples(rss=S.GiB))
    assert "memory_growth" not in rules_of(diagnose(flat))
    small = [S.GiB + i * int(0.15 * limit / 49) for i in range(50)]  # only +15%
    r = S.record(fp=S.fingerprint(ram_bytes=limit), samples_=S.samples(rss=small))
    assert "memory_growth" not in rules_of(diagnose(r))


def test_a_leak_comes_before_a_pegged_core_of_the_same_severity() -> None:
    # one core busy all along (a warning with impact 0.5 on 2 cores) while RSS grows by 30%
    # of the limit in a straight line (impact 0.3): the run that may be killed comes first
    limit = 4 * S.GiB
    rss = [S.GiB + i * int(0.30 * limit / 49) for i in range(50)]
    r = S.record(fp=S.fingerprint(ram_bytes=limit), samples_=S.samples(rss=rss, process_cpu=100))
    rules = rules_of(diagnose(r))
    assert rules[0] == "memory_growth" and "cpu_single_core" in rules


def test_memory_near_its_limit_because_it_grows_names_the_growth_first() -> None:
    # RSS climbs in a straight line to 80% of a 4 GiB budget: both are warnings, and the
    # near-limit one has the larger impact (0.80 against 0.55); the growth explains it
    limit = 4 * S.GiB
    rss = [int(0.25 * limit) + i * int(0.55 * limit / 49) for i in range(50)]
    r = S.record(samples_=S.samples(rss=rss))
    r.control["budget"] = {"budget_bytes": limit}
    assert rules_of(diagnose(r))[:2] == ["memory_growth", "memory_pressure"]
    # near the limit with no growth: the near-limit finding alone, first
    r = S.record(samples_=S.samples(rss=int(0.8 * limit)))
    r.control["budget"] = {"budget_bytes": limit}
    assert rules_of(diagnose(r))[0] == "memory_pressure"
    assert "memory_growth" not in rules_of(diagnose(r))
    # critical near-limit (95%) stays first: a cause of lower severity does not jump it
    rss = [int(0.4 * limit) + i * int(0.55 * limit / 49) for i in range(50)]
    r = S.record(samples_=S.samples(rss=rss))
    r.control["budget"] = {"budget_bytes": limit}
    assert rules_of(diagnose(r))[0] == "memory_pressure"


def test_streaming_suggested_when_data_is_loaded_whole() -> None:
    limit = 8 * S.GiB
    rss = [300 * MiB] * 5 + [300 * MiB + 3 * S.GiB] * 45  # jump before the first step, then flat
    r = S.record(fp=S.fingerprint(ram_bytes=limit), samples_=S.samples(rss=rss))
    r.steps = S.steps(n=40, duration=0.1, t0=0.8)
    (f,) = [f for f in diagnose(r) if f.rule == "streaming"]
    assert f.severity == "info" and "tf.data" in f.fix
    r.control["budget"] = {"budget_bytes": 6 * S.GiB}  # measured against the budget then
    (f,) = [f for f in diagnose(r) if f.rule == "streaming"]
    assert f.severity == "warning" and "50% of the memory budget" in f.title
    r = S.record(
        fp=S.fingerprint(ram_bytes=limit),
        samples_=S.samples(rss=[300 * MiB] * 5 + [800 * MiB] * 45),
    )
    r.steps = S.steps(n=40, duration=0.1, t0=0.8)
    assert "streaming" not in rules_of(diagnose(r))  # +500 MiB is 6% of 8 GiB: not whole data


# -- GPU ----------------------------------------------------------------------------------

HW_GPU = [{"index": 0, "name": "NVIDIA A100", "memory_total_bytes": 40 * S.GiB, "processes": []}]


def test_gpu_present_but_cpu_only_tensorflow() -> None:
    r = S.record(fp=S.fingerprint(gpus=HW_GPU))
    f = top_finding(r)
    assert f is not None and f.rule == "gpu_not_used" and f.severity == "critical"
    assert "CPU-only build" in f.cause and "tensorflow[and-cuda]" in f.fix


def test_gpu_hidden_by_cuda_visible_devices() -> None:
    fp = S.fingerprint(gpus=HW_GPU, env={"CUDA_VISIBLE_DEVICES": "-1"})
    (f,) = [f for f in diagnose(S.record(fp=fp)) if f.rule == "gpu_not_used"]
    assert "hides every GPU" in f.cause


def test_gpu_not_judged_when_tensorflow_did_not_list_devices() -> None:
    fp = S.fingerprint(gpus=HW_GPU)
    fp["tensorflow"]["physical_devices"] = None  # TF was not imported by the fingerprint
    assert "gpu_not_used" not in rules_of(diagnose(S.record(fp=fp)))


def gpu_samples(util: float, used_share: float, n: int = 50, **kw: object) -> list[list[GpuSample]]:
    total = 16 * S.GiB
    return [
        [
            GpuSample(
                0,
                util_percent=util,
                memory_used_bytes=int(used_share * total),
                memory_total_bytes=total,
                **kw,
            )
        ]
    ] * n  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("util", "rule"),
    [(4.9, "gpu_idle"), (5.0, "gpu_underused"), (49.0, "gpu_underused"), (50.0, None)],
)
def test_gpu_idle_and_underused_bands(util: float, rule: str | None) -> None:
    fp = S.fingerprint(tf_gpus=1, gpus=HW_GPU)
    found = rules_of(
        diagnose(S.record(fp=fp, samples_=S.samples(process_cpu=100, gpus=gpu_samples(util, 0.2))))
    )
    assert ("gpu_idle" in found) is (rule == "gpu_idle")
    assert ("gpu_underused" in found) is (rule == "gpu_underused")


def test_gpu_busy_memory_is_not_underused() -> None:
    fp = S.fingerprint(tf_gpus=1, gpus=HW_GPU)
    r = S.record(fp=fp, samples_=S.samples(gpus=gpu_samples(30.0, 0.6)))
    assert "gpu_underused" not in rules_of(diagnose(r))


@pytest.mark.parametrize(("transfer", "fires"), [(0.5, True), (0.49, False)])
def test_transfer_bound_from_tf_matmul_details(transfer: float, fires: bool) -> None:
    r = S.record(fp=S.fingerprint(tf_gpus=1, gpus=HW_GPU))
    r.workloads = [
        S.workload(
            "tf_matmul",
            1.0,
            start=0,
            end=1,
            device="GPU:0",
            variant="n=1000",
            details={"variant": "n=1000", "transfer_seconds_median": transfer},
        )
    ]
    found = [f for f in diagnose(r) if f.rule == "gpu_transfer_bound"]
    assert bool(found) is fires
    if fires:
        assert "tf_matmul n=1000" in found[0].title


def test_gpu_allocator_peak_and_other_processes_on_the_gpu() -> None:
    total = 16 * S.GiB
    gs = [
        [
            GpuSample(
                0,
                util_percent=90.0,
                memory_used_bytes=int(0.99 * total),
                memory_total_bytes=total,
                process_memory_used_bytes=int(0.6 * total),
            )
        ]
    ] * 50
    fp = S.fingerprint(
        tf_gpus=1,
        gpus=[
            dict(
                HW_GPU[0], processes=[{"pid": 9, "name": "jupyter", "used_memory_bytes": 6 * S.GiB}]
            )
        ],
    )
    r = S.record(
        fp=fp,
        samples_=S.samples(
            gpus=gs, tf_memory={"GPU:0": {"current_bytes": 1, "peak_bytes": int(0.95 * total)}}
        ),
    )
    found = {f.rule: f for f in diagnose(r)}
    assert "95%" in found["gpu_memory_peak"].title
    assert "jupyter (pid 9" in found["background_gpu"].evidence


@pytest.mark.parametrize(
    ("reasons", "share", "title"),
    [
        (("hw_power_brake_slowdown",), 0.2, "power"),
        (("hw_thermal_slowdown",), 0.1, "temperature"),
        (("hw_slowdown",), 0.08, None),
        (("sw_power_cap",), 1.0, None),  # a GPU at its power limit: working, not throttled
        (("gpu_idle",), 1.0, None),
    ],
)
def test_gpu_throttling(reasons: tuple[str, ...], share: float, title: str | None) -> None:
    n = 50
    hit = int(share * n)
    gs = [
        [
            GpuSample(
                0,
                util_percent=95.0,
                memory_used_bytes=1,
                memory_total_bytes=2,
                sm_clock_mhz=1100 if i < hit else 1400,
                throttle_reasons=reasons if i < hit else (),
            )
        ]
        for i in range(n)
    ]
    found = [
        f
        for f in diagnose(S.record(fp=S.fingerprint(tf_gpus=1), samples_=S.samples(gpus=gs)))
        if f.rule == "gpu_throttled"
    ]
    if title is None:
        assert not found
    else:
        assert title in found[0].title and "1100-1400 MHz" in found[0].evidence


def test_facts_read_a_record_with_missing_sections() -> None:
    r = S.record(fp={"host": {"hostname": "old"}}, samples_=S.samples(process_cpu=100))
    facts = run_facts(r)
    assert facts.usable_cores == 2.0  # from the per-core widths of the samples
    assert facts.memory_limit is None and facts.threads.blas is None
    diagnose(r)  # no error


def test_threshold_constants_are_named() -> None:
    assert input.INPUT_BOUND_HIGH == 0.20 and input.INPUT_BOUND_MODERATE == 0.05
    assert memory.MEMORY_NEAR_LIMIT_CRITICAL > memory.MEMORY_NEAR_LIMIT_WARNING
    assert gpu.GPU_IDLE_UTIL_PERCENT < gpu.GPU_UNDERUSED_UTIL_PERCENT


def test_one_core_busy_beside_background_load_is_not_called_gil_bound() -> None:
    # 100% on 2 cores, others take 0.6: less than half a core left idle
    found = rules_of(diagnose(S.record(samples_=S.samples(process_cpu=100, other_cores=0.6))))
    assert "cpu_single_core" not in found and "background_load" in found


def test_background_load_counts_only_the_cores_the_run_may_use() -> None:
    # the run is pinned to core 0; a process busy on core 1 does not compete with it
    fp = S.fingerprint(affinity=[0])
    samples = [
        s.__class__(**{**s.__dict__, "cpu_per_core_percent": (95.0, 100.0), "cpu_percent": 97.5})
        for s in S.samples(process_cpu=95)
    ]
    assert "background_load" not in rules_of(diagnose(S.record(fp=fp, samples_=samples)))
    samples = [
        s.__class__(**{**s.__dict__, "cpu_per_core_percent": (100.0, 0.0), "cpu_percent": 50.0})
        for s in S.samples(process_cpu=40)
    ]
    (f,) = [f for f in diagnose(S.record(fp=fp, samples_=samples)) if f.rule == "background_load"]
    assert "0.6 cores of 1 core" in f.title


def test_thread_settings_of_a_tfres_run_child_count() -> None:
    # tfres run --cpu-threads 1 sets the child's variables; the fingerprint is the parent's
    r = S.record(samples_=S.samples(process_cpu=99))
    r.control["environment"] = {"TF_NUM_INTRAOP_THREADS": "1", "OMP_NUM_THREADS": "1"}
    assert top_finding(r).rule == "threads_starved"  # type: ignore[union-attr]


def test_streaming_ignores_a_tensorflow_sized_jump_under_a_small_limit() -> None:
    # importing TF and building a model: ~0.9 GiB, 45% of a 2 GiB cgroup limit: not "data"
    rss = [100 * MiB] * 5 + [1000 * MiB] * 45
    r = S.record(fp=S.fingerprint(cgroup_limit=2 * S.GiB), samples_=S.samples(rss=rss))
    r.steps = S.steps(n=40, duration=0.1, t0=0.8)
    assert "streaming" not in rules_of(diagnose(r))


def test_streaming_leaves_out_what_the_gpu_runtime_took_when_it_started() -> None:
    # a bare interpreter, TF imported (+0.8 GiB), then the CUDA context (+1.5 GiB host RSS,
    # the first sample with GPU memory held by the run): the runtime, not data
    def run(rss: list[int]) -> list[Finding]:
        held = [None] * 8 + [300 * MiB] * 42
        gpus = [[GpuSample(0, process_memory_used_bytes=m)] for m in held]
        r = S.record(fp=S.fingerprint(ram_bytes=8 * S.GiB), samples_=S.samples(rss=rss, gpus=gpus))
        r.steps = S.steps(n=30, duration=0.1, t0=1.5)
        return [f for f in diagnose(r) if f.rule == "streaming"]

    gpu_start = [10 * MiB] * 2 + [int(0.8 * S.GiB)] * 6 + [int(2.3 * S.GiB)] * 42
    assert run(gpu_start) == []
    with_data = [10 * MiB] * 2 + [int(3.8 * S.GiB)] * 6 + [int(5.3 * S.GiB)] * 42  # +3 GiB
    (f,) = run(with_data)
    assert "3.8 GiB" in f.title and "not counting the 1.5 GiB" in f.evidence


def test_background_load_names_processes_measured_over_the_run_first() -> None:
    fp = S.fingerprint(top_cpu=[{"pid": 42, "name": "yes", "cpu_percent": 99.0}])
    r = S.record(fp=fp, samples_=S.samples(process_cpu=100, other_cores=1.0))
    r.extra["top_processes"] = [{"pid": 77, "name": "ffmpeg", "cpu_percent": 97.5}]
    (f,) = [f for f in diagnose(r) if f.rule == "background_load"]
    assert "ffmpeg (pid 77, 98%)" in f.evidence and "yes" not in f.evidence


def test_memory_growth_that_reached_the_limit_says_so() -> None:
    limit = 2 * S.GiB
    rss = [int(0.5 * limit) + i * int(0.5 * limit / 49) for i in range(50)]
    r = S.record(fp=S.fingerprint(ram_bytes=limit), samples_=S.samples(rss=rss))
    (f,) = [f for f in diagnose(r) if f.rule == "memory_growth"]
    assert f.evidence.endswith("it reached the limit")
