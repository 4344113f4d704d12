"""tfres.machine.doctor: every check, on the real machine and on fingerprints of others."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from fakes import FakeGpu, GiB
from tfres.machine.doctor import Check, doctor, exit_status
from tfres.machine.doctor_gpu import TESTED_CONFIGURATIONS
from tfres.machine.fingerprint import Fingerprint, fingerprint


@pytest.fixture(scope="module")
def real_fp() -> Fingerprint:
    """This machine with the real TensorFlow imported (device list included)."""
    return fingerprint(import_tensorflow=True, processes=False)


def _by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


def _gpu(**kw) -> dict:
    gpu = {
        "index": 0,
        "name": "NVIDIA A100-SXM4-40GB",
        "uuid": "GPU-1234",
        "memory_total_bytes": 40 * GiB,
        "memory_used_bytes": 1 * GiB,
        "driver_version": "550.54.15",
        "cuda_driver_version": "12.4",
        "compute_capability": "8.0",
        "mig_mode": False,
        "util_percent": 0.0,
        "processes": [],
    }
    gpu.update(kw)
    return gpu


def _cuda_tf(fp: Fingerprint, *, cuda="12.5.1", cudnn="9", devices=("CPU",), version="2.21.0"):
    tf = copy.deepcopy(fp.tensorflow)
    tf.update(
        installed=True,
        error=None,
        distribution="tensorflow",
        version=version,
        build_info={"is_cuda_build": True, "cuda_version": cuda, "cudnn_version": cudnn},
        physical_devices=[{"name": f"/physical_device:{d}:0", "device_type": d} for d in devices],
    )
    return tf


def test_every_check_runs_here_with_evidence(real_fp):
    checks = doctor(fp=real_fp)
    names = [c.name for c in checks]
    assert names == [
        "tensorflow_installed",
        "cuda_build",
        "gpu_visible",
        "cuda_pairing",
        "driver_cuda",
        "gpu_memory_free",
        "cpu_quota_threads",
        "thread_oversubscription",
        "swap",
        "free_memory",
    ]
    for c in checks:
        assert c.status in ("ok", "warn", "fail", "skip")
        assert c.evidence and c.title
        if c.status in ("warn", "fail"):
            assert c.fix, c
    by = _by_name(checks)
    assert by["tensorflow_installed"].status == "ok"
    assert real_fp.tensorflow["version"] in by["tensorflow_installed"].evidence
    assert Check.from_dict(checks[0].to_dict()) == checks[0]


def test_fake_gpu_with_cpu_only_tensorflow_names_the_wheel(fake_nvml):
    """NVML sees a GPU, the real TensorFlow here is a CPU-only wheel: doctor says so."""
    fake_nvml.gpus = [FakeGpu(name="NVIDIA A100-SXM4-40GB")]
    fp = fingerprint(import_tensorflow=True, processes=False)
    assert fp.gpus and not fp.tensorflow["build_info"].get("is_cuda_build")
    checks = doctor(fp=fp)
    gpu = _by_name(checks)["gpu_visible"]
    assert gpu.status == "fail"
    assert gpu.causes[0] == "cpu_only_wheel"
    assert "CPU-only" in gpu.evidence and fp.tensorflow["distribution"] in gpu.evidence
    assert "tensorflow[and-cuda]" in gpu.fix and "pip uninstall" in gpu.fix
    assert _by_name(checks)["cuda_build"].status == "warn"
    assert exit_status(checks) == 1


def test_cuda_visible_devices_hides_the_gpu(real_fp):
    for value in ("", "-1", "3"):
        fp = replace(
            real_fp,
            gpus=[_gpu()],
            tensorflow=_cuda_tf(real_fp),
            env={**real_fp.env, "CUDA_VISIBLE_DEVICES": value},
        )
        check = _by_name(doctor(fp=fp))["gpu_visible"]
        assert check.status == "fail"
        assert "cuda_visible_devices" in check.causes, (value, check)
        assert (
            "CUDA_VISIBLE_DEVICES" in check.evidence and "unset CUDA_VISIBLE_DEVICES" in check.fix
        )
        assert "cpu_only_wheel" not in check.causes


def test_driver_too_old(real_fp):
    fp = replace(
        real_fp,
        gpus=[_gpu(cuda_driver_version="11.4", driver_version="470.82")],
        tensorflow=_cuda_tf(real_fp),
        env={k: v for k, v in real_fp.env.items() if k != "CUDA_VISIBLE_DEVICES"},
    )
    by = _by_name(doctor(fp=fp))
    assert "driver_too_old" in by["gpu_visible"].causes
    assert "470.82" in by["gpu_visible"].evidence
    assert by["driver_cuda"].status == "fail"
    newer_minor = replace(fp, gpus=[_gpu(cuda_driver_version="12.2")])
    assert _by_name(doctor(fp=newer_minor))["driver_cuda"].status == "warn"
    same = replace(fp, gpus=[_gpu(cuda_driver_version="12.8")])
    assert _by_name(doctor(fp=same))["driver_cuda"].status == "ok"


def test_missing_cuda_libraries_here(real_fp):
    """This machine has no CUDA libraries: a CUDA build of TF would not find them."""
    fp = replace(real_fp, gpus=[_gpu()], tensorflow=_cuda_tf(real_fp), env={})
    check = _by_name(doctor(fp=fp))["gpu_visible"]
    assert check.causes == ("missing_cuda_libraries",)
    assert "libcudart.so.12" in check.evidence and "libcudnn.so.9" in check.evidence
    assert "tensorflow[and-cuda]==2.21.*" in check.fix


def test_native_windows(real_fp):
    fp = replace(
        real_fp,
        gpus=[_gpu()],
        tensorflow=_cuda_tf(real_fp, version="2.15.0"),
        host={**real_fp.host, "platform": "win32"},
        env={},
    )
    check = _by_name(doctor(fp=fp))["gpu_visible"]
    assert check.causes[0] == "native_windows"
    assert "WSL2" in check.fix


def test_gpu_seen_by_tensorflow_is_ok(real_fp):
    fp = replace(real_fp, gpus=[_gpu()], tensorflow=_cuda_tf(real_fp, devices=("CPU", "GPU")))
    assert _by_name(doctor(fp=fp))["gpu_visible"].status == "ok"


def test_gpu_on_pci_bus_without_driver(real_fp):
    fp = replace(real_fp, gpus=[], gpus_pci=["0000:3b:00.0"], gpus_reason="NVIDIA driver ...")
    check = _by_name(doctor(fp=fp))["gpu_visible"]
    assert check.status == "fail" and check.causes == ("no_driver",)
    no_gpu = replace(real_fp, gpus=[], gpus_pci=[])
    assert _by_name(doctor(fp=no_gpu))["gpu_visible"].status == "skip"


def test_cuda_pairing_against_the_tested_table(real_fp):
    cuda, cudnn = TESTED_CONFIGURATIONS["2.17"]
    ok = replace(real_fp, tensorflow=_cuda_tf(real_fp, version="2.17.1", cuda=cuda, cudnn=cudnn))
    assert _by_name(doctor(fp=ok))["cuda_pairing"].status == "ok"
    off = replace(real_fp, tensorflow=_cuda_tf(real_fp, version="2.17.1", cuda="11.8", cudnn="8"))
    check = _by_name(doctor(fp=off))["cuda_pairing"]
    assert check.status == "warn" and "11.8" in check.evidence
    unknown = replace(real_fp, tensorflow=_cuda_tf(real_fp, version="2.99.0"))
    assert _by_name(doctor(fp=unknown))["cuda_pairing"].status == "skip"


def test_other_process_holding_gpu_memory(real_fp):
    procs = [{"pid": 4242, "name": "python", "used_memory_bytes": 30 * GiB}]
    fp = replace(real_fp, gpus=[_gpu(processes=procs, memory_used_bytes=31 * GiB)])
    check = _by_name(doctor(fp=fp))["gpu_memory_free"]
    assert check.status == "warn" and "4242" in check.evidence
    assert "set_memory_growth" in check.fix
    light = replace(real_fp, gpus=[_gpu(processes=[], memory_used_bytes=19 * GiB)])
    assert _by_name(doctor(fp=light))["gpu_memory_free"].status == "ok"
    unlisted = replace(real_fp, gpus=[_gpu(processes=None, memory_used_bytes=21 * GiB)])
    assert _by_name(doctor(fp=unlisted))["gpu_memory_free"].status == "warn"


def test_cpu_quota_lower_than_threads(real_fp):
    cpu = {**real_fp.cpu, "cgroup_cpu_quota_cores": 1.0, "usable_cores": 1.0}
    tf = {**real_fp.tensorflow, "intra_op_threads_effective": 8}
    check = _by_name(doctor(fp=replace(real_fp, cpu=cpu, tensorflow=tf)))["cpu_quota_threads"]
    assert check.status == "warn"
    assert "TF_NUM_INTRAOP_THREADS=1" in check.fix
    tf_fit = {**real_fp.tensorflow, "intra_op_threads_effective": 1}
    blas_fit = [{**p, "num_threads": 1} for p in real_fp.blas]
    fit = replace(real_fp, cpu=cpu, tensorflow=tf_fit, blas=blas_fit)
    assert _by_name(doctor(fp=fit))["cpu_quota_threads"].status == "ok"


def test_oversubscription(real_fp):
    cpu = {**real_fp.cpu, "usable_cores": 4.0, "cgroup_cpu_quota_cores": None}
    tf = {**real_fp.tensorflow, "intra_op_threads_effective": 4}
    blas16 = [{"internal_api": "openblas", "num_threads": 16}]
    over = replace(real_fp, cpu=cpu, tensorflow=tf, blas=blas16)
    check = _by_name(doctor(fp=over))["thread_oversubscription"]
    assert check.status == "warn" and "BLAS alone" in check.evidence
    assert "OMP_NUM_THREADS=4" in check.fix
    fit = replace(real_fp, cpu=cpu, tensorflow=tf, blas=[{"num_threads": 4}])
    assert _by_name(doctor(fp=fit))["thread_oversubscription"].status == "ok"


@pytest.mark.parametrize(
    ("swap_used", "status"), [(0, "ok"), (100 * 2**20, "ok"), (2 * GiB, "warn"), (None, "skip")]
)
def test_swap_threshold(real_fp, swap_used, status):
    fp = replace(real_fp, memory={**real_fp.memory, "swap_used_bytes": swap_used})
    assert _by_name(doctor(fp=fp))["swap"].status == status


@pytest.mark.parametrize(
    ("total", "available", "limit", "status"),
    [
        (64 * GiB, 32 * GiB, None, "ok"),
        (64 * GiB, 5 * GiB, None, "warn"),  # under 10%
        (4 * GiB, 900 * 2**20, None, "warn"),  # under 1 GiB
        (64 * GiB, 60 * GiB, 2 * GiB, "ok"),  # the cgroup limit is the total
        (64 * GiB, 60 * GiB, 512 * 2**20, "warn"),
    ],
)
def test_free_memory_threshold(real_fp, total, available, limit, status):
    mem = {
        **real_fp.memory,
        "total_bytes": total,
        "available_bytes": available,
        "cgroup_memory_limit_bytes": limit,
    }
    assert _by_name(doctor(fp=replace(real_fp, memory=mem)))["free_memory"].status == status


def test_tensorflow_missing_fails(real_fp):
    fp = replace(real_fp, tensorflow={"installed": False, "reason": "TensorFlow is not installed"})
    checks = doctor(fp=fp)
    by = _by_name(checks)
    assert by["tensorflow_installed"].status == "fail"
    assert "pip install" in by["tensorflow_installed"].fix
    assert exit_status(checks) == 1


def test_tensorflow_missing_on_a_gpu_machine_asks_for_the_cuda_build(real_fp):
    # as seen on an H200 with PyTorch and no TensorFlow (docs/benchmarks/gpu.md)
    fp = replace(
        real_fp,
        tensorflow={"installed": False, "reason": "TensorFlow is not installed"},
        gpus=[{"index": 0, "name": "NVIDIA H200", "memory_total_bytes": 141 * 2**30}],
    )
    check = _by_name(doctor(fp=fp))["tensorflow_installed"]
    assert check.status == "fail"
    assert "NVML sees 1 GPU(s) (NVIDIA H200)" in check.evidence
    assert check.fix.startswith("pip install 'tfres[gpu]'") and "tfres[cpu]" not in check.fix


def test_warn_is_not_a_failure():
    assert exit_status([Check("a", "warn", "e", "f"), Check("b", "ok", "e")]) == 0
    assert exit_status([Check("a", "fail", "e", "f")]) == 1
    with pytest.raises(ValueError, match="status"):
        Check("a", "bad", "e")
