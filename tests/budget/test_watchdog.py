"""Memory budgets: parsing, the watchdog's thresholds, real processes stopped in time."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

from fakes import FakeClock
from tfres.backends.memlimit import HardLimit, MemoryReading, TreeMemory, _own_cgroups
from tfres.budget.command import BudgetWatcher
from tfres.budget.watchdog import MemoryBudget, limit_memory, parse_budget
from tfres.diagnosis.facts import run_facts
from tfres.diagnosis.rules.budget import budget_reached
from tfres.errors import BudgetExceededError
from tfres.record import Record
from tfres.timeline import Sample

GiB = 2**30
MiB = 2**20


def budget_findings(record: Record) -> list:
    """The budget's own rule on ``record``."""
    return list(budget_reached(run_facts(record)))


# -- parsing -------------------------------------------------------------------------------


def test_budget_as_percentage_size_or_bytes() -> None:
    ceiling = (8 * GiB, "RAM")
    assert parse_budget("10%", ceiling=ceiling) == int(0.8 * GiB)
    assert parse_budget("2GiB", ceiling=ceiling) == 2 * GiB
    assert parse_budget(1_000_000, ceiling=ceiling) == 1_000_000
    assert parse_budget("100%", ceiling=ceiling) == 8 * GiB


@pytest.mark.parametrize(
    ("budget", "words"),
    [
        ("9GiB", "memory budget '9GiB' (9.0 GiB) is above the 8.0 GiB of RAM"),
        ("150%", "is above the 8.0 GiB of RAM"),
        (0, "must be above 0 (got 0)"),
        ("0%", "must be above 0 (got '0%')"),
        (-1, "must be above 0 (got -1)"),
        ("abc", "cannot read size 'abc'"),
        ("-5%", "percentage must be a finite number >= 0 (got '-5%')"),
    ],
)
def test_bad_budget_is_one_clear_line(budget: object, words: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_budget(budget, ceiling=(8 * GiB, "RAM"))  # type: ignore[arg-type]
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_default_ceiling_is_this_machines_memory() -> None:
    total = psutil.virtual_memory().total
    assert parse_budget("50%") <= total // 2
    with pytest.raises(ValueError, match="is above the"):
        parse_budget(total + GiB)
    with pytest.raises(ValueError, match="is above the"):
        BudgetWatcher(total + GiB)
    with pytest.raises(ValueError, match="above 0"):
        BudgetWatcher(0)


# -- the watchdog's logic, on a fake clock and scripted readings --------------------------


class Readings:
    def __init__(self, values: list[int]) -> None:
        self.values = values

    def __call__(self, now: float) -> MemoryReading:
        value = self.values.pop(0) if len(self.values) > 1 else self.values[0]
        return MemoryReading(rss_bytes=value, processes=1)


def test_soft_threshold_sets_the_flag_and_calls_back_once() -> None:
    clock = FakeClock()
    reader = Readings([500 * MiB, 850 * MiB, 920 * MiB, 950 * MiB])
    budget = MemoryBudget(1000 * MiB, soft_ratio=0.9, hard=False, clock=clock, reader=reader)
    calls: list[int | None] = []
    budget.on_exceeded(lambda b: calls.append(b.used_bytes))
    budget.sample_once()
    clock.advance(0.5)  # slow growth: the trend would not reach the budget soon
    budget.sample_once()
    assert not budget.exceeded
    budget.check()  # nothing to raise yet
    clock.advance(0.5)
    budget.sample_once()
    clock.advance(0.5)
    budget.sample_once()
    assert budget.exceeded and not budget.over
    assert calls == [920 * MiB]
    assert budget.triggered_at_seconds == pytest.approx(1.0)
    assert budget.peak_bytes == 950 * MiB
    with pytest.raises(BudgetExceededError) as info:
        budget.check()
    assert (info.value.used_bytes, info.value.budget_bytes) == (950 * MiB, 1000 * MiB)
    control = budget.to_dict()
    assert control["budget_bytes"] == 1000 * MiB
    assert control["soft_bytes"] == 900 * MiB
    assert control["mechanisms"] == ["watchdog"]


def test_a_fast_trend_asks_before_the_soft_threshold_and_stops_before_the_budget() -> None:
    clock = FakeClock()
    reader = Readings([100 * MiB, 300 * MiB, 500 * MiB, 650 * MiB, 850 * MiB])
    budget = MemoryBudget(1000 * MiB, hard=False, interval=0.05, clock=clock, reader=reader)
    seen = []
    for _ in range(4):
        budget.sample_once()
        seen.append((budget.used_bytes, budget.exceeded, budget.over))
        clock.advance(0.05)
    # ~3.7 GB/s: at 650 MiB (below the 900 MiB soft threshold) the trend reaches the budget
    # within two readings, so it asks to stop; not yet at the budget within 1.5 readings
    assert seen[-1] == (650 * MiB, True, False) and not seen[-2][1]
    assert budget.rate_bytes_per_second == pytest.approx(550 * MiB / 0.15, rel=0.01)
    budget.sample_once()  # 850 MiB: the next reading would be past the budget: stop now
    assert budget.over and budget.used_bytes == 850 * MiB
    assert budget.reason is not None and "about to be exceeded" in budget.reason
    assert budget.peak_bytes is not None and budget.peak_bytes < 1000 * MiB


def test_a_watched_tree_that_keeps_growing_after_sigterm_gets_sigkill(tmp_path: Path) -> None:
    from tfres.backends.signals import StopLadder, new_group_options

    ready = tmp_path / "ready"
    code = (
        "import pathlib, signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "pathlib.Path(sys.argv[1]).write_text('')\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(ready)], **new_group_options())
    try:
        while not ready.exists():
            time.sleep(0.01)
        clock = FakeClock()
        ladder = StopLadder(proc.pid, grace_seconds=3600, clock=clock)
        reader = Readings([100 * MiB, 960 * MiB, 990 * MiB])
        budget = MemoryBudget(
            1000 * MiB, pid=proc.pid, ladder=ladder, clock=clock, reader=reader, interval=0.05
        )
        budget.sample_once()
        clock.advance(0.05)
        budget.sample_once()  # at the budget within one reading: SIGTERM (ignored)
        assert budget.over and ladder.terminated_at is not None and not ladder.killed
        time.sleep(0.2)
        assert proc.poll() is None
        clock.advance(0.05)
        budget.sample_once()  # asked, and still growing into the budget: SIGKILL now
        assert ladder.killed
        assert proc.wait(timeout=10) == -9
    finally:
        if proc.poll() is None:
            proc.kill()


def test_budget_crossing_records_the_reason_without_hard_action() -> None:
    clock = FakeClock()
    budget = MemoryBudget(1000 * MiB, hard=False, clock=clock, reader=Readings([1200 * MiB]))
    budget.sample_once()
    assert budget.over and budget.exceeded
    assert budget.reason is not None and "memory budget 1000.0 MiB exceeded" in budget.reason
    budget.reset()
    assert not budget.exceeded and not budget.over


def test_in_process_budget_raises_in_the_main_thread() -> None:
    base = psutil.Process().memory_info().rss
    hog: list[np.ndarray] = []
    budget = limit_memory(base + 120 * MiB, interval=0.02)
    try:
        with pytest.raises(BudgetExceededError) as info:
            for _ in range(200):  # up to 2 GB: the budget must stop it long before
                hog.append(np.ones(10 * MiB // 8))
                time.sleep(0.01)
    finally:
        budget.stop()
        hog.clear()
    assert info.value.budget_bytes == base + 120 * MiB
    # raised when the next reading would have been past the budget: at most one 10 MiB
    # step past it when the watchdog thread is late on a loaded machine
    assert base + 60 * MiB < info.value.used_bytes <= base + 130 * MiB
    assert len(hog) == 0 and budget.over and budget.reason


# -- real process trees ----------------------------------------------------------------------

SHARED_TREE = textwrap.dedent(
    """
    import os, sys, time
    data = bytearray(os.urandom(1)) * (150 * 2**20)   # touched: 150 MiB resident
    for _ in range(2):
        if os.fork() == 0:
            time.sleep(30); os._exit(0)                 # children share it copy-on-write
    print("ready", flush=True)
    time.sleep(30)
    """
)


def test_pss_counts_shared_pages_once_in_a_multi_process_tree() -> None:
    proc = subprocess.Popen([sys.executable, "-c", SHARED_TREE], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        rss = TreeMemory(proc.pid).read(time.monotonic())
        assert rss.processes == 3
        assert rss.rss_bytes > 3 * 150 * MiB  # RSS counts the shared 150 MiB three times
        budget = MemoryBudget(1000 * MiB, soft_ratio=0.3, pid=proc.pid, hard=False)
        used = budget.sample_once()
        assert budget.measure == "pss"
        assert 150 * MiB < used < rss.rss_bytes - 200 * MiB
    finally:
        for child in psutil.Process(proc.pid).children():
            child.kill()
        proc.kill()
        proc.wait()


GROWER = textwrap.dedent(
    """
    import time
    hog = []
    for i in range(300):                    # 1.5 GB at 5 MiB per 10 ms if nothing stops it
        hog.append(bytearray(5 * 2**20))
        time.sleep(0.01)
    print("finished", flush=True)
    """
)


def test_budget_watcher_stops_a_growing_child_via_watch(capfd: pytest.CaptureFixture[str]) -> None:
    from tfres.watch.command import watch

    budget = 250 * MiB
    watcher = BudgetWatcher(budget, grace_seconds=2.0)
    result = watch(
        [sys.executable, "-c", GROWER],
        watchers=[watcher],
        store=False,
        interval=0.1,
        grace_seconds=2.0,
    )
    record = result.record
    assert record.status == "partial"
    assert record.end_reason is not None and "memory budget 250.0 MiB" in record.end_reason
    assert "asked to stop before the budget with SIGTERM" in record.end_reason
    control = record.control["budget"]
    assert control["budget_bytes"] == budget
    assert control["exceeded"] is True and control["reason"]
    assert control["mechanisms"][0] == "watchdog"
    assert control["asked_with"] == "SIGTERM"
    assert control["peak_bytes"] <= budget  # stopped BEFORE the budget, not after
    assert any("passed 90% of the budget or was growing" in note for note in record.notes)
    assert result.exit_status != 0
    assert "finished" not in capfd.readouterr().out
    # the cgroup, if one was made, is gone
    _, v1 = _own_cgroups(os.getpid())
    if "cgroup-v1" in control["mechanisms"] and v1:
        folder = Path("/sys/fs/cgroup/memory") / v1.lstrip("/")
        assert not list(folder.glob(f"tfres-{os.getpid()}-*"))


def test_hard_limit_writes_a_cgroup_v2_subtree(tmp_path: Path) -> None:
    v2, _ = _own_cgroups(os.getpid())
    if v2 is None:
        pytest.skip("this kernel lists no cgroup v2 path for us")
    here = tmp_path / v2.lstrip("/")
    here.mkdir(parents=True, exist_ok=True)
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    (here / "cgroup.subtree_control").write_text("memory pids\n")
    limit = HardLimit(root=tmp_path)
    assert limit.apply(12345, high_bytes=100 * MiB, max_bytes=105 * MiB) == "cgroup-v2"
    assert limit.path is not None and limit.path.parent == here
    assert (limit.path / "memory.high").read_text() == str(100 * MiB)
    assert (limit.path / "memory.max").read_text() == str(105 * MiB)
    assert (limit.path / "cgroup.procs").read_text() == "12345"
    limit.raise_to(110 * MiB)
    assert (limit.path / "memory.max").read_text() == str(110 * MiB)
    folder = limit.path
    limit.release()
    assert not folder.exists()


def test_no_writable_cgroup_gives_the_reason(tmp_path: Path) -> None:
    limit = HardLimit(root=tmp_path)
    assert limit.apply(12345, high_bytes=MiB, max_bytes=MiB) is None
    assert limit.reason is not None and "no writable cgroup" in limit.reason


# -- tf.data and findings ----------------------------------------------------------------


def test_budget_options_give_tf_data_half_the_budget() -> None:
    from tfres.budget.watchdog import apply_budget, budget_options

    options = budget_options("1GiB")
    assert options.autotune.ram_budget == GiB // 2
    assert options.autotune.enabled is True
    import tensorflow as tf

    ds = apply_budget(tf.data.Dataset.range(3), 512 * MiB, fraction=1.0)
    assert ds.options().autotune.ram_budget == 512 * MiB
    with pytest.raises(ValueError, match="fraction"):
        budget_options("1GiB", fraction=0)


def _record(rss_mib: list[tuple[float, int]], budget_mib: int = 1000, **control: object) -> Record:
    record = Record(kind="run")
    record.samples = [Sample(t_seconds=t, process_rss_bytes=m * MiB) for t, m in rss_mib]
    record.control["budget"] = {"budget_bytes": budget_mib * MiB, "soft_ratio": 0.9, **control}
    return record


def _loading(rss_mib: list[tuple[float, int]], budget_mib: int) -> list:
    """The data-loaded-whole findings diagnose() gives a run under a budget, first step at 2 s."""
    from tfres.diagnosis.diagnose import diagnose

    record = _record(rss_mib, budget_mib)
    record.steps = [{"t_seconds": 2.0, "duration_seconds": 0.1, "epoch": 0, "step": 0}]
    return [f for f in diagnose(record) if "loaded whole" in f.title]


def test_findings_suggest_streaming_when_arrays_arrive_whole() -> None:
    burst = [(0, 100), (0.5, 120), (1.0, 1620), (1.5, 1630), (2, 1640), (8, 1660)]
    (found,) = _loading(burst, budget_mib=4000)
    assert found.rule == "streaming" and found.severity == "warning"
    assert "38% of the memory budget" in found.title
    assert "tf.data" in found.fix and "apply_budget(dataset, '3.9GiB')" in found.fix
    # nothing under a budget the jump is small against (1.5 GiB of 16 GiB)
    assert _loading(burst, budget_mib=16000) == []
    assert budget_findings(_record(burst)) == []  # the budget's own rules leave it to streaming
    assert budget_findings(Record(kind="run")) == []


def test_a_tensorflow_sized_start_is_not_data_loaded_whole() -> None:
    # `tfres run` of a TF script under a 1.5 GiB budget: a bare interpreter (10 MiB), then
    # importing TensorFlow and building a model: +560 MiB, 36% of the budget, in 1.5 s
    start = [(0, 10), (0.5, 140), (1.0, 430), (1.5, 570), (2, 575), (8, 580)]
    assert _loading(start, budget_mib=1536) == []
    # the same start followed by 1.2 GiB of arrays before the first step is data
    loaded = [*start[:4], (1.8, 570 + 1230), (2, 1810), (8, 1820)]
    (found,) = _loading(loaded, budget_mib=1536 * 2)
    assert "RSS rose from 10.0 MiB" in found.evidence


def test_findings_report_the_soft_threshold_unless_the_budget_stopped_it() -> None:
    near = _record(
        [(0, 100), (1, 910)], exceeded=True, triggered_at_seconds=1.0, peak_bytes=910 * MiB
    )
    assert [f.rule for f in budget_findings(near)] == ["budget_reached"]
    stopped = _record([(0, 100), (1, 1010)], exceeded=True, triggered_at_seconds=0.9, reason="x")
    assert budget_findings(stopped) == []
