"""The allocator-near-full and GPU-underused rules in TensorFlow's default set-up (no memory
growth), as ``tfres run`` records it: NVML traces of the shape real drivers give, read
through the real GpuReader from the scripted fake NVML (tests/fakes.py), and the allocator
readings the command's start-up hook writes, taken in by the real AllocatorFollower.

The default reservation: NVML's used memory jumps to the GPU's total less a few hundred MiB
(the CUDA context and what TensorFlow leaves free) the moment the runtime starts, and stays
flat whatever the model does. What the model holds is only in the allocator's readings.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

import synthetic as S
from fakes import FakeGpu, GiB
from tfres.backends.nvml_reader import GpuReader
from tfres.diagnosis.diagnose import diagnose
from tfres.watch.allocator import AllocatorFollower

MiB = 2**20
N = 60  # 6 s at 10 Hz
TOTAL = 16 * GiB
UP = 10  # the runtime starts at the 11th sample (1 s): TensorFlow's import before it
#: NVML's used memory: the driver's few hundred MiB, then all but ~300 MiB from the start
DEFAULT_RESERVATION = [400 * MiB] * UP + [TOTAL - 300 * MiB] * (N - UP)
#: a pid NVML lists that this machine cannot see: the run is in a container's PID namespace
HOST_PID = 2**22 + 7


def _nvml_trace(fake_nvml, *, util: float, own: int | None) -> list[list]:
    """N readings of one GPU under TensorFlow's default reservation, ``util`` % busy.

    ``own``: the run's memory as NVML lists it for this process once the runtime is up;
    None for a container, where NVML lists the process under a pid of the host's.
    """
    me = os.getpid()
    fake_nvml.gpus = [FakeGpu(memory_total_bytes=TOTAL, util_percent=util)]
    reader = GpuReader()
    out = []
    for i, used in enumerate(DEFAULT_RESERVATION):
        up = i >= UP
        pid, mine = (HOST_PID, used) if own is None else (me, own)
        fake_nvml.gpus[0].processes = [(pid, mine)] if up else []
        fake_nvml.gpus[0].memory_used_bytes = used
        out.append(reader.read({me}))
    return out


def _allocator(tmp_path: Path, peaks_gib: list[float] | None) -> list[dict]:
    """Each sample's ``tf_memory`` as tfres run fills it: the hook's lines (one a second
    from the runtime's start, the peak climbing to its last value) read by the follower
    before every sample."""
    path = tmp_path / "events.jsonl"
    path.write_text("")
    notes: list[str] = []
    follower = AllocatorFollower(path, note=notes.append)
    out = []
    for i in range(N):
        second = (i - UP) / 10
        if peaks_gib is not None and i >= UP and second == int(second):
            peak = int(peaks_gib[min(int(second), len(peaks_gib) - 1)] * GiB)
            devices = {"GPU:0": {"current_bytes": peak // 2, "peak_bytes": peak}}
            line = {"event": "allocator", "pid": 4242, "t_monotonic": 100.0 + i / 10,
                    "devices": devices}  # fmt: skip
            with path.open("a") as fh:
                fh.write(json.dumps(line) + "\n")
        out.append(follower.read() or {})
    follower.close()
    assert not notes
    return out


def _findings(gpus: list[list], tf_memory: list[dict]) -> dict:
    fp = S.fingerprint(gpus=[{"index": 0, "name": "NVIDIA A100", "memory_total_bytes": TOTAL}])
    fp["tensorflow"]["physical_devices"] = None  # tfres run: the parent never imports TF
    samples = [
        replace(s, tf_memory=memory)
        for s, memory in zip(S.samples(n=N, process_cpu=100, gpus=gpus), tf_memory, strict=True)
    ]
    record = S.record(fp=fp, samples_=samples)
    record.extra["tf_gpu_nvml_index"] = {"GPU:0": 0}
    return {f.rule: f for f in diagnose(record)}


@pytest.mark.parametrize("own", [int(TOTAL - 500 * MiB), None], ids=["own-listed", "container"])
def test_allocator_near_full_fires_from_the_hooks_readings(fake_nvml, tmp_path, own):
    gpus = _nvml_trace(fake_nvml, util=92.0, own=own)
    found = _findings(gpus, _allocator(tmp_path, [3.0, 9.0, 14.9]))
    f = found["gpu_memory_peak"]
    assert "93%" in f.title  # 14.9 of 16 GiB
    assert "TensorFlow allocator peak" in f.evidence
    # the same NVML trace with a model that holds 4 GiB: the reservation is not a full GPU
    assert "gpu_memory_peak" not in _findings(gpus, _allocator(tmp_path, [2.0, 4.0]))
    # and without the hook's readings (--no-instrument) nothing is said about the allocator
    assert "gpu_memory_peak" not in _findings(gpus, _allocator(tmp_path, None))


@pytest.mark.parametrize("own", [int(TOTAL - 500 * MiB), None], ids=["own-listed", "container"])
def test_underused_is_judged_on_the_allocator_not_the_reservation(fake_nvml, tmp_path, own):
    gpus = _nvml_trace(fake_nvml, util=22.0, own=own)
    f = _findings(gpus, _allocator(tmp_path, [1.0, 2.0]))["gpu_underused"]
    assert f.title == "GPU 0 underused: 22% busy with 88% of its memory free"  # 2 of 16 GiB
    assert "TensorFlow's allocator peaked at 2.0 GiB of 16.0 GiB" in f.evidence
    assert "default reservation" in f.evidence
    # a model that fills the memory it has is not underused, whatever the utilization
    assert "gpu_underused" not in _findings(gpus, _allocator(tmp_path, [6.0, 12.0]))


def test_a_reservation_nvml_cannot_attribute_does_not_hide_an_underused_gpu(fake_nvml, tmp_path):
    # a container: NVML lists the run under the host's pid, so its own memory is unknown;
    # the GPU is 98% "used" by TensorFlow's reservation and only 22% busy
    gpus = _nvml_trace(fake_nvml, util=22.0, own=None)
    assert all(g.process_memory_used_bytes is None for s in gpus[UP:] for g in s)
    f = _findings(gpus, _allocator(tmp_path, None))["gpu_underused"]
    assert f.title == "GPU 0 underused: 22% busy"
    assert "cannot split by process" in f.evidence and "reserves nearly all" in f.evidence
    # busy GPUs stay quiet
    assert "gpu_underused" not in _findings(_nvml_trace(fake_nvml, util=80.0, own=None), [{}] * N)


def test_memory_growth_still_reads_nvml_as_the_pool(fake_nvml, tmp_path):
    # with growth on, a GPU 98% full from another program is not TensorFlow's reservation
    gpus = _nvml_trace(fake_nvml, util=22.0, own=None)
    fp = S.fingerprint(gpus=[{"index": 0, "memory_total_bytes": TOTAL}],
                       env={"TF_FORCE_GPU_ALLOW_GROWTH": "true"})  # fmt: skip
    record = S.record(fp=fp, samples_=S.samples(n=N, process_cpu=100, gpus=gpus))
    assert "gpu_underused" not in {f.rule for f in diagnose(record)}
