"""The allocator readings of a ``tfres run`` command reach its samples' ``tf_memory``.

:class:`AllocatorFollower` on a real file the way the child's hook appends to it, then
``watch()`` of a real child that writes the hook's allocator lines (scripted readings) while
the scripted fake NVML shows TensorFlow's default reservation: the record's own findings
judge the allocator, as for an in-process ``tfres.monitor`` run.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from fakes import FakeGpu, GiB
from tfres.watch.allocator import NO_INSTRUMENT_NOTE, AllocatorFollower
from tfres.watch.command import watch

MiB = 2**20


def _line(pid: int, **devices: tuple[int, int]) -> str:
    figures = {
        name.replace("_", ":"): {"current_bytes": current, "peak_bytes": peak}
        for name, (current, peak) in devices.items()
    }
    return json.dumps({"event": "allocator", "pid": pid, "t_monotonic": 1.0, "devices": figures})


def test_follower_answers_the_latest_complete_reading(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("")
    notes: list[str] = []
    follower = AllocatorFollower(path, note=notes.append)
    assert follower.read() is None  # nothing yet: the runtime has not started
    with path.open("a") as fh:
        fh.write('{"event": "phase", "name": "import tensorflow"}\n')
        fh.write(_line(7, GPU_0=(10, 20)) + "\n")
        fh.write(_line(7, GPU_0=(30, 40))[:25])  # the hook is halfway through its next line
    assert follower.read() == {"GPU:0": {"current_bytes": 10, "peak_bytes": 20}}
    with path.open("a") as fh:
        fh.write(_line(7, GPU_0=(30, 40))[25:] + "\n")
        fh.write("{not json\n")
        fh.write('{"event": "allocator", "pid": 7, "devices": {"GPU:0": {"peak_bytes": -1}}}\n')
    reading = follower.read()
    assert reading == {"GPU:0": {"current_bytes": 30, "peak_bytes": 40}}
    reading["GPU:0"]["peak_bytes"] = 0  # a copy: the caller cannot change the next answer
    assert follower.read() == {"GPU:0": {"current_bytes": 30, "peak_bytes": 40}}
    assert follower.readings == 2 and not notes
    follower.close()


def test_follower_keeps_to_the_first_process_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(_line(100, GPU_0=(1, 2)) + "\n" + _line(200, GPU_0=(5, 9)) * 1 + "\n")
    notes: list[str] = []
    follower = AllocatorFollower(path, note=notes.append)
    assert follower.read() == {"GPU:0": {"current_bytes": 1, "peak_bytes": 2}}
    with path.open("a") as fh:
        fh.write(_line(200, GPU_0=(6, 9)) + "\n")
    follower.read()
    assert follower.pid == 100
    assert notes == [
        "TensorFlow allocator of process 200 left out: the record follows the allocator of "
        "process 100, the first to report"
    ]


def test_a_missing_file_is_no_reading(tmp_path: Path) -> None:
    follower = AllocatorFollower(tmp_path / "gone.jsonl", note=lambda _: None)
    assert follower.read() is None


# The hook's output, scripted: the runtime starts after 0.4 s, the allocator's peak climbs
# (GiB: PEAKS) during "fit"; a final reading at exit.
CHILD = """
import json, os, time
events = os.environ["TFRES_EVENTS_FILE"]

def write(obj):
    with open(events, "a") as fh:
        fh.write(json.dumps(obj) + "\\n")

def allocator(current, peak):
    write({{"event": "allocator", "pid": os.getpid(), "t_monotonic": time.monotonic(),
           "devices": {{"GPU:0": {{"current_bytes": current, "peak_bytes": peak}}}}}})

PEAKS = {peaks}
time.sleep(0.4)
start = time.monotonic()
for gib in PEAKS:
    allocator(gib << 29, gib << 30)
    time.sleep(0.3)
write({{"event": "phase", "name": "fit", "start_monotonic": start,
        "end_monotonic": time.monotonic()}})
allocator(1 << 30, PEAKS[-1] << 30)
"""


def _run_on_a_reserved_gpu(fake_nvml, tmp_path: Path, peaks: tuple[int, ...]):
    # TensorFlow's default reservation as a driver shows it from a container: the GPU's
    # used memory at its total less ~300 MiB once the runtime is up, the process listed
    # under a pid of the host's (so NVML cannot say which memory is the run's); 20% busy
    total = 16 * GiB
    fake_nvml.gpus = [
        FakeGpu(
            memory_total_bytes=total,
            memory_used_bytes=[400 * MiB] * 4 + [total - 300 * MiB],
            util_percent=20,
            processes=[(2**22 + 7, total - 500 * MiB)],
        )
    ]
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(CHILD.format(peaks=peaks)))
    result = watch([sys.executable, str(script)], interval=0.05, gpus=[0], store=False)
    assert result.exit_status == 0
    return result.record


def test_tfres_run_in_the_default_set_up_finds_the_allocator_near_full(
    fake_nvml, tmp_path: Path
) -> None:
    record = _run_on_a_reserved_gpu(fake_nvml, tmp_path, (2, 8, 15))
    readings = [s.tf_memory["GPU:0"] for s in record.samples if s.tf_memory]
    assert readings, "no sample carries the hook's allocator readings"
    assert not record.samples[0].tf_memory  # before the runtime started: none
    assert readings[-1]["peak_bytes"] == 15 * GiB  # the last sample: the reading at exit
    assert {r["peak_bytes"] >> 30 for r in readings} <= {2, 8, 15}
    found = {f["rule"]: f for f in record.findings}
    assert "94%" in found["gpu_memory_peak"]["title"]  # 15 of 16 GiB
    assert "TensorFlow allocator peak" in found["gpu_memory_peak"]["evidence"]
    # 15 GiB held: the memory is used, so 20% busy is not "underused with spare memory"
    assert "gpu_underused" not in found
    assert NO_INSTRUMENT_NOTE not in record.notes


def test_tfres_run_in_the_default_set_up_finds_the_gpu_underused(fake_nvml, tmp_path: Path) -> None:
    record = _run_on_a_reserved_gpu(fake_nvml, tmp_path, (1, 2, 3))
    found = {f["rule"]: f for f in record.findings}
    assert (
        found["gpu_underused"]["title"] == "GPU 0 underused: 20% busy with 81% of its memory free"
    )
    assert (
        "TensorFlow's allocator peaked at 3.0 GiB of 16.0 GiB" in found["gpu_underused"]["evidence"]
    )
    rules = {f["rule"] for f in record.findings}
    assert "gpu_memory_peak" not in rules  # NVML's 98% is the reservation, not the model


def test_no_instrument_says_the_allocator_is_not_read(python: str) -> None:
    result = watch(
        [python, "-c", "import time; time.sleep(0.2)"], interval=0.05, store=False,
        instrument=False,
    )  # fmt: skip
    assert result.exit_status == 0
    assert NO_INSTRUMENT_NOTE in result.record.notes
