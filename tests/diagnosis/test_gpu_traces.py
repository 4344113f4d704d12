"""The GPU rules on NVML traces of the shape real drivers give, read through the real
GpuReader from the scripted fake NVML (tests/fakes.py): TensorFlow's default reservation,
memory growth, a GPU at its power limit, and TensorFlow's GPU:0 being NVML's GPU 1."""

from __future__ import annotations

import os

import synthetic as S
from fakes import FakeGpu, GiB
from tfres.backends.nvml_reader import GpuReader
from tfres.diagnosis.diagnose import diagnose

N = 60  # 6 s at 10 Hz
TOTAL = 16 * GiB


def _trace(fake_nvml, *, util: float, own: list[int], **gpu: object) -> list[list]:
    me = os.getpid()
    fake_nvml.gpus = [FakeGpu(memory_total_bytes=TOTAL, util_percent=util, **gpu)]
    reader = GpuReader()
    out = []
    for used in own:  # the run's memory as NVML lists it, sample by sample
        fake_nvml.gpus[0].processes = [(me, used)]
        fake_nvml.gpus[0].memory_used_bytes = used + 300 * 2**20
        out.append(reader.read({me}))
    return out


def _findings(gpus: list[list], *, env: dict[str, str] | None = None, **kw: object) -> dict:
    fp = S.fingerprint(tf_gpus=1, gpus=[{"index": 0, "name": "NVIDIA A100",
                                         "memory_total_bytes": TOTAL}], env=env)  # fmt: skip
    record = S.record(fp=fp, samples_=S.samples(n=len(gpus), process_cpu=100, gpus=gpus, **kw))
    return {f.rule: f for f in diagnose(record)}


def test_underused_is_found_through_tensorflows_default_reservation(fake_nvml):
    # TensorFlow's default: the process takes ~15.5 of 16 GiB at start, then it stays flat
    own = [0] * 3 + [int(15.5 * GiB)] * (N - 3)
    found = _findings(_trace(fake_nvml, util=22.0, own=own))
    f = found["gpu_underused"]
    assert "22% busy" in f.title and "reserved by TensorFlow" in f.evidence
    assert "gpu_memory_peak" not in found  # a reservation is not a full allocator


def test_allocator_near_full_from_nvml_with_memory_growth(fake_nvml):
    # memory growth: the pool grows in steps as the model needs it, up to 93% of the GPU
    own = [int(TOTAL * share) for share in [0.1] * 10 + [0.5] * 20 + [0.93] * (N - 30)]
    found = _findings(
        _trace(fake_nvml, util=85.0, own=own), env={"TF_FORCE_GPU_ALLOW_GROWTH": "true"}
    )
    f = found["gpu_memory_peak"]
    assert "93%" in f.title and "memory growth on" in f.evidence
    # the same trace without growth says nothing about the allocator's peak
    assert "gpu_memory_peak" not in _findings(_trace(fake_nvml, util=85.0, own=own))


def test_a_gpu_at_its_power_limit_is_not_throttled(fake_nvml):
    own = [int(10 * GiB)] * N
    found = _findings(_trace(fake_nvml, util=99.0, own=own, throttle_bitmask=0x4))
    assert "gpu_throttled" not in found
    thermal = _findings(_trace(fake_nvml, util=99.0, own=own, throttle_bitmask=0x4 | 0x20))
    assert "temperature" in thermal["gpu_throttled"].title


def test_tensorflows_gpu0_peak_is_judged_against_the_gpu_nvml_calls_1(fake_nvml):
    me = os.getpid()
    fake_nvml.gpus = [
        FakeGpu(memory_total_bytes=80 * GiB, util_percent=90, uuid="GPU-a"),
        FakeGpu(memory_total_bytes=TOTAL, util_percent=90, uuid="GPU-b",
                processes=[(me, int(15.5 * GiB))]),
    ]  # fmt: skip
    reader = GpuReader()
    gpus = [reader.read({me}) for _ in range(N)]
    fp = S.fingerprint(tf_gpus=1, gpus=[{"index": 0, "memory_total_bytes": 80 * GiB},
                                        {"index": 1, "memory_total_bytes": TOTAL}])  # fmt: skip
    peak = {"GPU:0": {"current_bytes": 1, "peak_bytes": int(15 * GiB)}}
    record = S.record(fp=fp, samples_=S.samples(n=N, gpus=gpus, tf_memory=peak))
    record.extra["tf_gpu_nvml_index"] = {"GPU:0": 1}  # CUDA_VISIBLE_DEVICES=1
    found = {f.rule: f for f in diagnose(record)}
    # 15 GiB is 94% of the 16 GiB GPU 1, which TensorFlow used, not 19% of GPU 0's 80 GiB
    assert "GPU 1 memory nearly full" in found["gpu_memory_peak"].title


def _pytorch_findings(gpus: list[list]) -> dict:
    """A PyTorch program as the start-up hook records it: its import, then one phase of work."""
    from tfres.timeline import Phase

    fp = S.fingerprint(tf_installed=False, gpus=[{"index": 0, "name": "NVIDIA H200",
                                                  "memory_total_bytes": TOTAL}])  # fmt: skip
    record = S.record(fp=fp, samples_=S.samples(n=len(gpus), process_cpu=100, gpus=gpus))
    end = record.samples[-1].t_seconds
    record.phases = [
        Phase("import torch", 0.1, 0.5),
        Phase("start-up", 0.0, 0.5),
        Phase("PyTorch program", 0.5, end),
    ]
    return {f.rule: f for f in diagnose(record)}


def test_a_pytorch_program_gets_pytorch_advice(fake_nvml):
    own = [2 * GiB] * N
    underused = _pytorch_findings(_trace(fake_nvml, util=38.0, own=own))["gpu_underused"]
    assert "38% busy" in underused.title
    assert "DataLoader" in underused.fix and "steps_per_execution" not in underused.fix
    assert underused.span[0] == 0.5  # the work after `import torch`, not the import
    idle = _pytorch_findings(_trace(fake_nvml, util=1.0, own=own))["gpu_idle"]
    assert "torch.cuda.is_available()" in idle.fix and "tf." not in idle.fix


def test_a_gpu_busy_copying_is_told_apart_from_one_computing(fake_nvml):
    # as an H200 read a program that only copied host to device: utilization 97%, the
    # performance monitor's compute engine ~0% (docs/benchmarks/gpu.md)
    own = [18 * GiB] * N
    trace = _trace(fake_nvml, util=97.0, own=own, engine_active_percent=0.5)
    found = _pytorch_findings(trace)
    copy = found["gpu_copy_bound"]
    assert "97% utilization, kernels 0%" in copy.title
    assert "pin_memory=True" in copy.fix
    assert "gpu_underused" not in found and "gpu_idle" not in found
    # the same utilization where the engine ran the kernels: nothing to flag
    busy = _pytorch_findings(_trace(fake_nvml, util=97.0, own=own, engine_active_percent=95.0))
    assert "gpu_copy_bound" not in busy and "gpu_underused" not in busy


def test_underuse_is_judged_on_the_compute_engine_where_the_gpu_reports_it(fake_nvml):
    own = [2 * GiB] * N
    found = _pytorch_findings(_trace(fake_nvml, util=60.0, own=own, engine_active_percent=30.0))
    underused = found["gpu_underused"]
    assert "30% busy" in underused.title and "compute engine active (NVML GPM) 30%" in (
        underused.evidence
    )
