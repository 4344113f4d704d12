"""What is read how often: CPU over spans of >= 0.1 s (carried in between), the host's
memory every 0.1 s, TensorFlow's allocator every 0.5 s; fake clocks, real /proc."""

from __future__ import annotations

import dataclasses
import time

import pytest

from fakes import FakeClock
from tfres.backends.host_now import HostReader
from tfres.backends.proc import HostReading, TreeReading
from tfres.backends.proc_files import PROC_AVAILABLE
from tfres.sampler.derive import SampleMaker
from tfres.sampler.sampler import Sampler
from tfres.timeline import Sample

linux_only = pytest.mark.skipif(not PROC_AVAILABLE, reason="Linux /proc only")


class CountedHost(HostReader):
    """A real host reader that counts which /proc files it read."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(cpu_every_seconds=0.1, memory_every_seconds=0.1, clock=clock)
        self.reads: list[str] = []
        real = self._read_file

        def counted(path: str) -> bytes:
            self.reads.append(path)
            return real(path)

        self._read_file = counted


@linux_only
def test_host_cpu_and_memory_are_read_once_a_span_and_carried_at_100_hz():
    clock = FakeClock()
    host = CountedHost(clock)
    host.read()
    clock.advance(0.1)
    time.sleep(0.05)  # the kernel's counters move in 10 ms ticks of real time
    first = host.read()  # a span of 0.1 s: percentages
    assert first.cpu_read and first.memory_read and first.cpu_percent is not None
    assert host.forks is not None
    host.reads.clear()
    for _ in range(9):
        clock.advance(0.01)
        carried = host.read()
        assert not carried.cpu_read and not carried.memory_read
        assert carried.cpu_percent == first.cpu_percent
        assert carried.cpu_per_core_percent == first.cpu_per_core_percent
        assert carried.memory_available_bytes == first.memory_available_bytes
        assert host.forks is None  # not read: a tree looks at /proc/loadavg instead
    assert "/proc/stat" not in host.reads and "/proc/meminfo" not in host.reads
    clock.advance(0.01)
    assert host.read().cpu_read  # 0.1 s on: the next span is read
    assert host.reads.count("/proc/stat") == 1


@linux_only
def test_host_cpu_over_a_span_is_the_os_figure_for_that_span():
    host = HostReader(cpu_every_seconds=0.1)
    host.read()
    before = _busy_total()
    end = time.monotonic() + 0.3
    while time.monotonic() < end:  # keep one core busy
        pass
    reading = host.read()
    after = _busy_total()
    assert reading.cpu_read and reading.cpu_percent is not None
    expected = 100.0 * (after[0] - before[0]) / (after[1] - before[1])
    assert reading.cpu_percent == pytest.approx(expected, abs=15.0)
    assert reading.cpu_percent >= 100.0 / len(reading.cpu_per_core_percent) - 15.0


def _busy_total() -> tuple[int, int]:
    with open("/proc/stat", "rb") as fh:
        values = [int(v) for v in fh.readline().split()[1:9]]
    total = sum(values)
    return total - values[3] - values[4], total


def _tree(cpu_seconds: float) -> TreeReading:
    return TreeReading((4242,), cpu_seconds, 3, 1000, None, None)


HOST = HostReading(10.0, (10.0, 10.0), 1, 2, 0, None, None, None, None, io_read=False)


def test_tree_cpu_at_100_hz_is_over_spans_not_one_tick():
    """One 10 ms tick every other sample: per sample that would read 100%, 0%, 100%..."""
    maker = SampleMaker((2.0, "test"))
    cpu, samples = 0.0, []
    for k in range(41):
        cpu += 0.01 if k % 2 else 0.0
        samples.append(maker.make(k * 0.01, k * 0.01, HOST, _tree(cpu), (), None))
    figures = [s.process_cpu_percent for s in samples]
    assert figures[:10] == [None] * 10  # the first span is not over yet
    assert set(figures[10:]) == {50.0}  # half a core over every 0.1 s span, carried
    assert samples[-1].process_cpu_share_percent == 25.0  # of 2 cores
    assert maker.make(0.5, 0.5, HOST, TreeReading((), cpu, 0, 0, None, None), (), None) == (
        Sample(0.5, 10.0, (10.0, 10.0), 1, 2, 0, process_count=0)
    )  # a gone tree has no CPU figure


def test_a_made_sample_is_the_dataclass_sample():
    maker = SampleMaker(None)
    maker.make(0.0, 0.0, HOST, _tree(1.0), (), None)
    made = maker.make(0.2, 0.2, HOST, _tree(1.1), (), {"CPU:0": {"current_bytes": 1}})
    fields = {f.name: getattr(made, f.name) for f in dataclasses.fields(Sample)}
    assert made == Sample(**fields)
    assert made.process_cpu_percent == pytest.approx(50.0)
    assert made.to_dict()["tf_memory"] == {"CPU:0": {"current_bytes": 1}}
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.cpu_percent = 1.0  # type: ignore[misc]


class Allocator:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> dict[str, dict[str, int]]:
        self.calls += 1
        return {"CPU:0": {"current_bytes": self.calls, "peak_bytes": self.calls}}


def _scripted_sampler(interval: float, clock=time.monotonic, **kwargs) -> Sampler:
    return Sampler(
        interval,
        clock=clock,
        host_reader=lambda: HOST,
        tree_reader=lambda: _tree(1.0),
        gpus=False,
        others=False,
        cpu_cores=(1.0, "test"),
        **kwargs,
    )


@pytest.mark.onednn
def test_the_allocator_is_read_every_half_second_and_carried():
    clock = FakeClock()
    reader = Allocator()
    s = _scripted_sampler(0.1, clock, tf_memory=True, tf_reader=reader)
    seen = []
    for _ in range(11):  # 0.0 .. 1.0 s
        seen.append(s.sample_once().tf_memory["CPU:0"]["current_bytes"])
        clock.advance(0.1)
    assert reader.calls == 3  # at 0, 0.5 and 1.0 s
    assert seen == [1] * 5 + [2] * 5 + [3]


@pytest.mark.onednn
def test_the_last_sample_reads_the_allocator_again():
    reader = Allocator()
    s = _scripted_sampler(0.02, tf_memory=True, tf_reader=reader)
    s.start()
    time.sleep(0.15)
    s.stop()
    assert reader.calls == 2  # the first sample and the last, nothing in between
    assert s.samples[-1].tf_memory["CPU:0"]["peak_bytes"] == 2


@pytest.mark.parametrize("interval", [0.01, 2.0])
def test_stop_is_prompt_whatever_the_interval(interval):
    """The loop waits on a lock stop() releases: stop() never waits out a slow beat."""
    s = _scripted_sampler(interval)
    s.start()
    time.sleep(0.1)
    started = time.monotonic()
    s.stop()
    assert time.monotonic() - started < 0.25
    assert not s.running and s.count >= 2  # the first sample and the last at least
