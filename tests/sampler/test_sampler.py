"""The sampler: fake clock and readers for the arithmetic, real psutil for the process tree,
FakeNVML for the GPUs, and a simulated 24-hour run for the storage bound."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from fakes import FakeClock, FakeGpu
from tfres.backends.host import usable_cores_and_source
from tfres.backends.others import ProcessCpu
from tfres.backends.proc import HostReader, HostReading, ProcessTree, TreeReading
from tfres.sampler.sampler import Sampler, check_interval
from tfres.timeline import GpuSample


class ScriptedHost:
    """Host readings whose counters grow by fixed amounts per call."""

    def __init__(self, *, disk_read_per_call: int = 1000, net_recv_per_call: int = 500) -> None:
        self.calls = 0
        self.disk = disk_read_per_call
        self.net = net_recv_per_call

    def __call__(self) -> HostReading:
        self.calls += 1
        n = self.calls
        return HostReading(
            cpu_percent=None if n == 1 else 40.0,
            cpu_per_core_percent=() if n == 1 else (30.0, 50.0),
            memory_used_bytes=2_000_000_000 + n,
            memory_available_bytes=6_000_000_000,
            swap_used_bytes=0,
            disk_read_bytes=n * self.disk,
            disk_write_bytes=None,
            net_sent_bytes=0,
            net_recv_bytes=n * self.net,
        )


class ScriptedTree:
    """A tree that burns ``cpu_per_call`` CPU seconds between readings."""

    def __init__(self, *, cpu_per_call: float = 0.05, pids: tuple[int, ...] = (4242,)) -> None:
        self.calls = 0
        self.cpu_per_call = cpu_per_call
        self.pids = pids

    def __call__(self) -> TreeReading:
        self.calls += 1
        return TreeReading(
            pids=self.pids,
            cpu_seconds=self.calls * self.cpu_per_call,
            threads=7,
            rss_bytes=123_000_000,
            uss_bytes=None,
            pss_bytes=None,
        )


def make_sampler(clock: FakeClock, interval: float = 0.1, **kwargs) -> Sampler:
    kwargs.setdefault("gpus", False)
    return Sampler(
        interval,
        clock=clock,
        host_reader=kwargs.pop("host_reader", ScriptedHost()),
        tree_reader=kwargs.pop("tree_reader", ScriptedTree()),
        tf_memory=False,
        cpu_cores=kwargs.pop("cpu_cores", (2.0, "CPU affinity (2 cores)")),
        **kwargs,
    )


def test_rates_and_cpu_come_from_differences_over_the_clock():
    clock = FakeClock()
    s = make_sampler(clock)
    first = s.sample_once()
    assert first.t_seconds == 0.0
    assert first.process_cpu_percent is None  # a rate needs two readings
    assert first.disk_read_bytes_per_second is None
    clock.advance(0.1)
    second = s.sample_once()
    assert second.t_seconds == pytest.approx(0.1)
    assert second.disk_read_bytes_per_second == pytest.approx(1000 / 0.1)
    assert second.net_recv_bytes_per_second == pytest.approx(500 / 0.1)
    assert second.disk_write_bytes_per_second is None  # unreadable stays None, never 0
    assert second.process_cpu_percent == pytest.approx(50.0)  # 0.05 s CPU in 0.1 s
    assert second.process_cpu_share_percent == pytest.approx(25.0)  # of 2 cores
    assert second.cpu_per_core_percent == (30.0, 50.0)
    assert second.process_threads == 7 and second.process_count == 1
    assert s.extra["cpu_share_of"] == "CPU affinity (2 cores)"


def test_share_is_relative_to_a_cgroup_quota_when_given():
    clock = FakeClock()
    s = make_sampler(clock, cpu_cores=(0.5, "cgroup CPU quota (0.5 cores)"))
    s.sample_once()
    clock.advance(0.1)
    sample = s.sample_once()
    assert sample.process_cpu_share_percent == pytest.approx(100.0)
    assert "cgroup" in s.extra["cpu_share_of"]


def test_marks_and_phases_sit_on_the_sampler_clock():
    clock = FakeClock()
    s = make_sampler(clock)
    s.sample_once()
    clock.advance(2.0)
    s.mark("epoch 2")
    with s.phase("eval"):
        clock.advance(1.5)
    s.add_phase("epoch 1", 0.25, 1.75)
    assert [(m.label, m.t_seconds) for m in s.marks] == [("epoch 2", 2.0)]
    assert [(p.name, p.start_seconds, p.end_seconds) for p in s.phases] == [
        ("eval", 2.0, 3.5),
        ("epoch 1", 0.25, 1.75),
    ]


def test_start_takes_a_first_sample_and_stop_a_last_one():
    s = Sampler(
        0.02,
        host_reader=ScriptedHost(),
        tree_reader=ScriptedTree(),
        gpus=False,
        tf_memory=False,
        cpu_cores=(1.0, "test"),
    )
    s.start()
    assert s.samples[0].t_seconds == 0.0
    time.sleep(0.3)
    before_stop = s.elapsed()
    s.stop()
    samples = s.samples
    assert samples[-1].t_seconds >= before_stop  # the last one is taken at stop
    assert len(samples) >= 6
    gaps = sorted(b.t_seconds - a.t_seconds for a, b in zip(samples, samples[1:-1], strict=False))
    assert gaps[len(gaps) // 2] == pytest.approx(0.02, abs=0.015)  # a steady beat
    assert not any(t.name == "tfres-sampler" and t.is_alive() for t in threading.enumerate())
    s.stop()  # twice is fine


@pytest.mark.parametrize("bad", [0, -5, float("nan"), 3601, "0.1", True])
def test_bad_intervals_are_refused_naming_the_value(bad):
    with pytest.raises(ValueError, match="interval"):
        check_interval(bad)


def test_host_reader_keeps_its_own_cpu_baseline():
    reader = HostReader()
    first = reader.read()
    assert first.cpu_percent is None and first.cpu_per_core_percent == ()
    time.sleep(0.05)
    second = reader.read()
    assert second.cpu_percent is not None and 0.0 <= second.cpu_percent <= 100.0
    assert len(second.cpu_per_core_percent) == (os.cpu_count() or 1)
    assert second.memory_available_bytes and second.memory_available_bytes > 0


def test_usable_cores_name_their_source():
    cores, source = usable_cores_and_source()
    assert 0 < cores <= (os.cpu_count() or 1)
    assert "affinity" in source or "cgroup" in source


# -- the real process tree ------------------------------------------------------------------
def test_tree_sees_children_and_survives_one_vanishing(python):
    holder = subprocess.Popen(
        [python, "-c", "import time; x = bytearray(64 * 2**20); time.sleep(30)"],
    )
    short = subprocess.Popen([python, "-c", "import time; time.sleep(30)"])
    try:
        tree = ProcessTree(os.getpid(), rescan_seconds=0.0, full_memory_every=1)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            reading = tree.read()
            if {holder.pid, short.pid} <= set(reading.pids) and reading.rss_bytes > 64 * 2**20:
                break
            time.sleep(0.05)
        assert {holder.pid, short.pid} <= set(reading.pids)
        assert reading.uss_bytes is not None and reading.pss_bytes is not None
        cpu_before = reading.cpu_seconds
        short.kill()
        short.wait()
        after = tree.read()  # the vanished one is skipped, never an error
        assert short.pid not in after.pids
        assert holder.pid in after.pids
        assert after.cpu_seconds >= cpu_before  # CPU of the gone never goes back
    finally:
        for p in (holder, short):
            p.kill()
            p.wait()


def test_tree_of_a_gone_process_reads_empty(python):
    gone = subprocess.Popen([python, "-c", "pass"])
    gone.wait()
    tree = ProcessTree(gone.pid)
    reading = tree.read()
    assert reading.pids == ()
    s = Sampler(0.1, pid=gone.pid, gpus=False, cpu_cores=(1.0, "test"))
    sample = s.sample_once()
    assert sample.process_count == 0 and sample.process_rss_bytes is None


def test_uss_is_read_every_nth_sample_only():
    tree = ProcessTree(os.getpid(), children=False, full_memory_every=3)
    readings = [tree.read() for _ in range(6)]
    assert [r.uss_bytes is not None for r in readings] == [True, False, False, True, False, False]


# -- GPUs through NVML ----------------------------------------------------------------------
def test_gpu_columns_come_from_nvml(fake_nvml):
    me = os.getpid()
    fake_nvml.gpus = [FakeGpu(util_percent=[10, 90], processes=[(me, 256 * 2**20)])]
    clock = FakeClock()
    s = make_sampler(clock, gpus=True, tree_reader=ScriptedTree(pids=(me,)))
    first = s.sample_once()
    clock.advance(0.1)
    second = s.sample_once()
    assert [g.index for g in first.gpus] == [0]
    assert first.gpus[0].util_percent == 10.0 and second.gpus[0].util_percent == 90.0
    assert second.gpus[0].process_memory_used_bytes == 256 * 2**20
    assert second.gpus[0].power_watts == pytest.approx(120.0)
    s.stop()


def test_nvml_failing_mid_run_stops_gpu_columns_not_the_run(fake_nvml):
    clock = FakeClock()
    s = make_sampler(clock, gpus=True)
    for _ in range(3):
        assert s.sample_once().gpus[0].util_percent == 35.0
        clock.advance(0.1)
    import pynvml

    fake_nvml.fail_now(pynvml.NVMLError_GpuIsLost)
    later = []
    for _ in range(6):
        later.append(s.sample_once())
        clock.advance(0.1)
    assert all(sample.memory_used_bytes is not None for sample in later)  # host goes on
    assert later[-1].gpus == () and later[-2].gpus == ()  # the GPU columns stopped
    assert any("GPU readings stopped" in n for n in s.notes)
    assert any("fallen off the bus" in n for n in s.notes)


def test_no_driver_means_no_gpus_and_a_reason(fake_nvml):
    import pynvml

    fake_nvml.init_error = pynvml.NVMLError_LibraryNotFound
    s = make_sampler(FakeClock(), gpus=True)
    assert s.sample_once().gpus == ()
    assert "driver" in s.extra["gpu_reason"]


class SlowGpuReader:
    """A GPU reader whose NVML takes ``delay`` seconds per reading (a hung driver)."""

    available = True

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.calls = 0

    def read(self, pids):
        self.calls += 1
        time.sleep(self.delay)
        return [GpuSample(index=0, util_percent=50.0, memory_used_bytes=1)]


def test_a_slow_nvml_never_holds_up_host_samples():
    reader = SlowGpuReader(delay=3.0)
    s = make_sampler(FakeClock(), interval=0.1, gpu_reader=reader)
    took = []
    for _ in range(5):
        t = time.perf_counter()
        s.sample_once()
        took.append(time.perf_counter() - t)
    assert max(took) < 1.0  # each waits interval/2 (0.05 s) for NVML, never its 3 s
    assert reader.calls == 1  # one reading in flight, not one per sample
    s.stop()


# -- storage bound ---------------------------------------------------------------------------
def test_a_simulated_day_stays_bounded():
    """24 h at 1 Hz through sample_once: the last 10 min in full, 10 s buckets before."""
    clock = FakeClock()
    s = make_sampler(clock, interval=1.0)
    for _ in range(24 * 3600 + 1):
        s.sample_once()
        clock.advance(1.0)
    samples, buckets = s.samples, s.aggregates
    assert len(samples) == 601  # t = 85800 .. 86400 s
    assert samples[0].t_seconds == pytest.approx(85800.0)
    assert len(buckets) == 8580  # (86400 - 600) / 10
    assert all(b["count"] == 10 for b in buckets)
    assert buckets[0]["start_seconds"] == 0.0 and buckets[-1]["end_seconds"] == 85800.0
    assert buckets[5]["mean"]["process_cpu_percent"] == pytest.approx(5.0)  # 0.05 s per 1 s
    assert buckets[5]["min"]["memory_used_bytes"] < buckets[5]["max"]["memory_used_bytes"]
    assert s.count == 86401
    storage = s.storage()
    assert storage["samples_folded"] == 86401 - 601


def test_buckets_merge_in_pairs_past_the_limit():
    clock = FakeClock()
    s = make_sampler(clock, interval=1.0, window_seconds=60, bucket_seconds=10, max_buckets=50)
    for _ in range(3000):
        s.sample_once()
        clock.advance(1.0)
    buckets = s.aggregates
    assert len(buckets) <= 50
    widths = {round(b["end_seconds"] - b["start_seconds"]) for b in buckets}
    assert widths == {80}  # 10 -> 20 -> 40 -> 80 s
    assert sum(b["count"] for b in buckets) == 3000 - len(s.samples)
    starts = [b["start_seconds"] for b in buckets]
    assert starts == sorted(set(starts))


def test_sampler_never_imports_tensorflow(python):
    code = (
        "import sys, tfres\n"
        "with tfres.Sampler(0.05) as s:\n"
        "    sum(range(10**6))\n"
        "assert 'tensorflow' not in sys.modules, 'tensorflow imported'\n"
        "print(len(s.samples))\n"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) >= 2


@pytest.mark.skipif(sys.platform != "linux", reason="per-thread CPU clock")
def test_sampler_counts_its_own_cpu_time():
    with Sampler(0.01, gpus=False, tf_memory=False) as s:
        time.sleep(0.3)
    assert 0 < s.cpu_seconds < 0.3


@pytest.mark.skipif(not os.path.exists("/proc/meminfo"), reason="Linux /proc readers")
def test_host_figures_from_proc_match_psutil():
    import psutil

    from tfres.backends import host_now

    memory = host_now._meminfo()
    assert memory["MemTotal"] == psutil.virtual_memory().total
    disk = psutil.disk_io_counters()
    read, written = host_now._diskstats()
    assert 0 <= read - disk.read_bytes < 64 * 2**20  # counters only grow between the calls
    assert 0 <= written - disk.write_bytes < 64 * 2**20
    net = psutil.net_io_counters()
    sent, recv = host_now._net_bytes()
    assert 0 <= sent - net.bytes_sent < 64 * 2**20 and 0 <= recv - net.bytes_recv < 64 * 2**20
    ours = host_now._proc_stat_cores()
    theirs = [host_now._busy_and_total(t) for t in psutil.cpu_times(percpu=True)]
    assert len(ours) == len(theirs)
    for (busy, total), (p_busy, p_total) in zip(ours, theirs, strict=True):
        assert busy / total == pytest.approx(p_busy / p_total, abs=0.01)


def test_other_processes_are_scanned_at_start_and_stop_without_the_tree():
    cpu = {"calls": 0}

    def listing():
        cpu["calls"] += 1
        n = cpu["calls"]
        return [
            ProcessCpu(4242, 1, "watched", 5.0 * n, 0.0),  # the tree (ScriptedTree's pid)
            ProcessCpu(4243, 4242, "its-child", 5.0 * n, 0.0),
            ProcessCpu(31337, 1, "indexer", 0.1 * n, 0.0),
        ]

    s = Sampler(
        0.02,
        host_reader=ScriptedHost(),
        tree_reader=ScriptedTree(),
        gpus=False,
        tf_memory=False,
        cpu_cores=(1.0, "test"),
        others_reader=listing,
    )
    assert s.top_processes() is None  # before any scan
    with s:
        time.sleep(0.1)
    assert cpu["calls"] == 2  # start and stop; the next one is due after 3 s
    (top,) = s.top_processes() or []
    assert top["pid"] == 31337 and top["name"] == "indexer" and top["cpu_percent"] > 0
    assert s.others is not None and "2 scans" in (s.others.source() or "")
    off = Sampler(0.02, tree_reader=ScriptedTree(), gpus=False, tf_memory=False, others=False)
    with off:
        pass
    assert off.top_processes() is None and off.others is None


class CountingGpuReader:
    available = True

    def __init__(self) -> None:
        self.calls = 0

    def read(self, pids):
        self.calls += 1
        return [GpuSample(index=0, util_percent=float(self.calls), memory_used_bytes=1)]


def test_gpus_are_read_about_ten_times_a_second_however_fast_the_host_is_sampled():
    clock, reader = FakeClock(), CountingGpuReader()
    s = make_sampler(clock, interval=0.01, gpu_reader=reader)
    readings = []
    for _ in range(100):  # 1 s at 100 Hz
        gpus = s.sample_once().gpus
        readings.append(gpus[0].util_percent if gpus else None)
        clock.advance(0.01)
    s.stop()
    assert 10 <= reader.calls <= 12  # not 100: NVML's counters refresh every 1/6-1 s
    held = [r for r in readings if r is not None]
    assert len(held) >= 90 and held == sorted(held)  # the latest reading, carried forward
