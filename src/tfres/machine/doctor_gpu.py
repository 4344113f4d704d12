"""The GPU checks of ``tfres doctor``: CUDA build, GPU visibility, CUDA/cuDNN pairing,
driver version and GPU memory held by other processes.

:func:`gpu_visible` answers the question asked most, "why does TensorFlow not use my GPU?",
with every known cause that applies (``Check.causes``): ``cpu_only_wheel``,
``missing_cuda_libraries``, ``cuda_visible_devices``, ``driver_too_old``,
``native_windows`` (``no_driver`` when the GPU is on the PCI bus but NVML cannot use it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from tfres.backends.tf import cuda_libraries
from tfres.machine.checks import Check, tf_facts, tf_gpus, tf_series, tf_version, version_tuple
from tfres.machine.fingerprint import Fingerprint
from tfres.units import format_bytes

__all__ = [
    "TESTED_CONFIGURATIONS",
    "OTHERS_GPU_MEMORY_FRACTION",
    "cuda_build",
    "gpu_visible",
    "cuda_pairing",
    "driver_cuda",
    "gpu_memory_held",
    "nvml_sees",
]

#: TensorFlow's tested GPU build configurations on Linux, TF "major.minor" -> (CUDA, cuDNN),
#: from https://www.tensorflow.org/install/source#gpu ("Tested build configurations").
#: Rows 2.20 and 2.21 are UNVERIFIED (written from memory, not checked against the page):
#: they follow 2.18/2.19, as the wheels' ``build_info`` and pinned nvidia-* packages show.
TESTED_CONFIGURATIONS: dict[str, tuple[str, str]] = {
    "2.12": ("11.8", "8.6"),
    "2.13": ("11.8", "8.6"),
    "2.14": ("11.8", "8.7"),
    "2.15": ("12.2", "8.9"),
    "2.16": ("12.3", "8.9"),
    "2.17": ("12.3", "8.9"),
    "2.18": ("12.5", "9.3"),
    "2.19": ("12.5", "9.3"),
    "2.20": ("12.5", "9.3"),  # unverified
    "2.21": ("12.5", "9.3"),  # unverified
}

#: Warn when processes other than this one hold more than this share of a GPU's memory.
OTHERS_GPU_MEMORY_FRACTION = 0.5
_GPU_WHEEL = "pip install 'tensorflow[and-cuda]=={v}.*'"


def _cvd_hides(fp: Fingerprint, nvml_count: int) -> str | None:
    """Why ``CUDA_VISIBLE_DEVICES`` hides every GPU, or None when it does not."""
    if "CUDA_VISIBLE_DEVICES" not in fp.env:
        return None
    value = fp.env["CUDA_VISIBLE_DEVICES"].strip()
    if value in ("", "-1"):
        return f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU"
    first = value.split(",")[0].strip()
    if first.isdigit() and int(first) >= nvml_count:
        return f"CUDA_VISIBLE_DEVICES={value} names GPU {first}, but only {nvml_count} exist"
    if not first.isdigit() and first.startswith(("GPU-", "MIG-")):
        uuids = [str(g.get("uuid") or "") for g in fp.gpus]
        if not any(u.startswith(first) for u in uuids):
            return f"CUDA_VISIBLE_DEVICES={value} names no GPU that NVML sees"
    return None


def cuda_build(fp: Fingerprint) -> Check:
    tf = tf_facts(fp)
    title = "TensorFlow built with CUDA"
    if not tf.get("installed") or tf.get("skipped"):
        return Check("cuda_build", "skip", "TensorFlow is not installed", title=title)
    info = tf.get("build_info") or {}
    if info.get("is_cuda_build"):
        return Check(
            "cuda_build",
            "ok",
            f"CUDA build (CUDA {info.get('cuda_version')}, cuDNN {info.get('cudnn_version')})",
            title=title,
        )
    what = f"CPU-only build ({tf.get('distribution') or 'tensorflow'} {tf.get('version')})"
    if fp.gpus or fp.gpus_pci:
        return Check(
            "cuda_build",
            "warn",
            f"{what}, but this machine has an NVIDIA GPU",
            f"pip uninstall -y {tf.get('distribution') or 'tensorflow'} && "
            + _GPU_WHEEL.format(v=tf_series(fp)),
            title,
        )
    return Check("cuda_build", "ok", f"{what}; fine: this machine has no NVIDIA GPU", title=title)


def nvml_sees(fp: Fingerprint) -> str:
    """The GPUs of the fingerprint in words: ``NVML sees 2 GPU(s) (NVIDIA A100, NVIDIA T4)``."""
    names = ", ".join(sorted({str(g.get("name")) for g in fp.gpus}))
    return f"NVML sees {len(fp.gpus)} GPU(s) ({names})"


def gpu_visible(fp: Fingerprint) -> Check:
    """Does TensorFlow see the GPUs NVML sees? When it sees none, every known cause that
    applies is named in ``causes``, with its evidence and its fix."""
    name, title = "gpu_visible", "NVIDIA GPU visible to TensorFlow"
    if not fp.gpus:
        return _no_usable_gpu(fp, name, title)
    tf = tf_facts(fp)
    names = ", ".join(sorted({str(g.get("name")) for g in fp.gpus}))
    seen = tf_gpus(fp)
    if not tf.get("installed") or tf.get("error"):
        evidence = f"{nvml_sees(fp)} but TensorFlow is not usable"
        return Check(name, "skip", evidence, title=title)
    if seen is None:
        return Check(
            name,
            "skip",
            f"NVML sees {len(fp.gpus)} GPU(s); TensorFlow's device list was not captured",
            "run `tfres doctor` (it imports TensorFlow to list the devices)",
            title,
        )
    if seen:
        status = "ok"
        evidence = f"TensorFlow sees {len(seen)} of the {len(fp.gpus)} GPU(s) NVML sees ({names})"
        if len(seen) < len(fp.gpus) and "CUDA_VISIBLE_DEVICES" not in fp.env:
            status = "warn"
        return Check(name, status, evidence, title=title)
    causes = [c for c in (why(fp) for why in _CAUSES) if c is not None]
    found = f"{nvml_sees(fp)} but TensorFlow sees none"
    if not causes:
        return Check(
            name,
            "fail",
            f"{found}, and none of the known causes applies",
            "read TensorFlow's loader messages: TF_CPP_MIN_LOG_LEVEL=0 python -c "
            "\"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"",
            title,
            ("unknown",),
        )
    return Check(
        name,
        "fail",
        f"{found}: " + "; ".join(c.evidence for c in causes),
        " ; ".join(c.fix for c in causes),
        title,
        tuple(c.name for c in causes),
    )


def _no_usable_gpu(fp: Fingerprint, name: str, title: str) -> Check:
    """NVML sees no GPU: a driver problem if one is on the PCI bus, else nothing to check."""
    if fp.gpus_pci:
        return Check(
            name,
            "fail",
            f"{len(fp.gpus_pci)} NVIDIA GPU(s) on the PCI bus ({', '.join(fp.gpus_pci)}) but "
            f"NVML cannot use them: {fp.gpus_reason}",
            "install the NVIDIA driver (e.g. sudo apt install nvidia-driver-550), reboot, "
            "and check with: nvidia-smi",
            title,
            ("no_driver",),
        )
    reason = fp.gpus_reason or "NVML sees none"
    return Check(name, "skip", f"no NVIDIA GPU here ({reason})", title=title)


# -- why TensorFlow sees no GPU while NVML sees some: one function per known cause --------
@dataclass(frozen=True)
class _Cause:
    name: str
    evidence: str
    fix: str


def _native_windows(fp: Fingerprint) -> _Cause | None:
    version = tf_version(fp)
    if (fp.host or {}).get("platform") != "win32" or version is None or version < (2, 11):
        return None
    return _Cause(
        "native_windows",
        f"native Windows with TensorFlow {tf_facts(fp).get('version')}: GPU support on native "
        "Windows ended with TF 2.10",
        "use WSL2 (then pip install 'tensorflow[and-cuda]'), or pin tensorflow<2.11 with CUDA 11.2",
    )


def _cpu_only_wheel(fp: Fingerprint) -> _Cause | None:
    tf = tf_facts(fp)
    info = tf.get("build_info") or {}
    dist = tf.get("distribution") or "tensorflow"
    if info.get("is_cuda_build") and not dist.endswith("-cpu"):
        return None
    return _Cause(
        "cpu_only_wheel",
        f"the installed wheel is CPU-only ({dist} {tf.get('version')}, "
        f"is_cuda_build={info.get('is_cuda_build')})",
        f"pip uninstall -y {dist} && " + _GPU_WHEEL.format(v=tf_series(fp)),
    )


def _cuda_visible_devices(fp: Fingerprint) -> _Cause | None:
    hidden = _cvd_hides(fp, len(fp.gpus))
    if not hidden:
        return None
    return _Cause(
        "cuda_visible_devices",
        hidden,
        "unset CUDA_VISIBLE_DEVICES  (or export CUDA_VISIBLE_DEVICES=0)",
    )


def _driver_too_old(fp: Fingerprint) -> _Cause | None:
    info = tf_facts(fp).get("build_info") or {}
    gpu = fp.gpus[0]
    driver_cuda = version_tuple(gpu.get("cuda_driver_version"))
    built_cuda = version_tuple(info.get("cuda_version"))
    if not (driver_cuda and built_cuda and driver_cuda[0] < built_cuda[0]):
        return None
    return _Cause(
        "driver_too_old",
        f"the driver supports CUDA up to {gpu.get('cuda_driver_version')} "
        f"(driver {gpu.get('driver_version')}) but TensorFlow was built with "
        f"CUDA {info.get('cuda_version')}",
        f"update the NVIDIA driver to one that supports CUDA {info.get('cuda_version')} "
        "(>= 525 for CUDA 12), then check: nvidia-smi",
    )


def _missing_cuda_libraries(fp: Fingerprint) -> _Cause | None:
    info = tf_facts(fp).get("build_info") or {}
    if not info.get("is_cuda_build") or not sys.platform.startswith("linux"):
        return None
    missing = [so for so, path in cuda_libraries(info).items() if path is None]
    if not missing:
        return None
    return _Cause(
        "missing_cuda_libraries",
        f"CUDA libraries TensorFlow loads are not found: {', '.join(missing)}",
        _GPU_WHEEL.format(v=tf_series(fp)) + "  (installs the nvidia-* CUDA/cuDNN wheels)",
    )


#: in the order they are reported
_CAUSES: tuple[Callable[[Fingerprint], _Cause | None], ...] = (
    _native_windows,
    _cpu_only_wheel,
    _cuda_visible_devices,
    _driver_too_old,
    _missing_cuda_libraries,
)


def cuda_pairing(fp: Fingerprint) -> Check:
    name, title = "cuda_pairing", "TF/CUDA/cuDNN pairing tested"
    info = tf_facts(fp).get("build_info") or {}
    if not info.get("is_cuda_build"):
        return Check(name, "skip", "not a CUDA build of TensorFlow", title=title)
    series = tf_series(fp)
    tested = TESTED_CONFIGURATIONS.get(series)
    built = (str(info.get("cuda_version")), str(info.get("cudnn_version")))
    if tested is None:
        evidence = (
            f"no tested configuration known for TF {series}; "
            f"built with CUDA {built[0]}, cuDNN {built[1]}"
        )
        return Check(name, "skip", evidence, title=title)
    same = (
        version_tuple(built[0]) == version_tuple(tested[0])
        and (version_tuple(built[1]) or (0,))[:1] == (version_tuple(tested[1]) or (0,))[:1]
    )
    evidence = (
        f"TF {series} built with CUDA {built[0]}, cuDNN {built[1]}; "
        f"tested: CUDA {tested[0]}, cuDNN {tested[1]}"
    )
    if same:
        return Check(name, "ok", evidence, title=title)
    return Check(
        name,
        "warn",
        evidence + " (a custom build or a mismatched install)",
        _GPU_WHEEL.format(v=series) + "  (the official wheel and its pinned CUDA libraries)",
        title,
    )


def driver_cuda(fp: Fingerprint) -> Check:
    name, title = "driver_cuda", "driver new enough for TF's CUDA"
    info = tf_facts(fp).get("build_info") or {}
    if not fp.gpus:
        return Check(name, "skip", "no NVIDIA GPU here", title=title)
    if not info.get("is_cuda_build"):
        return Check(name, "skip", "not a CUDA build of TensorFlow", title=title)
    gpu = fp.gpus[0]
    driver = version_tuple(gpu.get("cuda_driver_version"))
    built = version_tuple(info.get("cuda_version"))
    evidence = (
        f"driver {gpu.get('driver_version')} supports CUDA up to {gpu.get('cuda_driver_version')}; "
        f"TensorFlow built with CUDA {info.get('cuda_version')}"
    )
    fix = (
        f"update the NVIDIA driver to one supporting CUDA {info.get('cuda_version')}; "
        "check: nvidia-smi"
    )
    if driver is None or built is None:
        return Check(name, "skip", evidence + " (a version could not be read)", title=title)
    if driver[0] < built[0]:
        return Check(name, "fail", evidence, fix, title)
    if driver < built:
        return Check(
            name,
            "warn",
            evidence + " (runs through CUDA minor-version compatibility; kernels that need "
            "PTX JIT can fail)",
            fix,
            title,
        )
    return Check(name, "ok", evidence, title=title)


def gpu_memory_held(fp: Fingerprint) -> Check:
    name, title = "gpu_memory_free", "GPU memory not held by others"
    if not fp.gpus:
        return Check(name, "skip", "no NVIDIA GPU here", title=title)
    busy: list[str] = []
    for gpu in fp.gpus:
        total = gpu.get("memory_total_bytes")
        if not total:
            continue
        procs = gpu.get("processes") or []
        by_processes = sum(p.get("used_memory_bytes") or 0 for p in procs)
        held = by_processes or gpu.get("memory_used_bytes") or 0
        if held > OTHERS_GPU_MEMORY_FRACTION * total:
            who = ", ".join(f"{p.get('name') or '?'} (pid {p.get('pid')})" for p in procs[:3])
            busy.append(
                f"GPU {gpu.get('index')}: {format_bytes(held)} of {format_bytes(total)} held"
                + (f" by {who}" if who else "")
            )
    if busy:
        return Check(
            name,
            "warn",
            "; ".join(busy),
            "stop those processes (nvidia-smi lists them), pick a free GPU with "
            "CUDA_VISIBLE_DEVICES, or share it: "
            "tf.config.experimental.set_memory_growth(gpu, True)",
            title,
        )
    evidence = f"no GPU has more than {OTHERS_GPU_MEMORY_FRACTION:.0%} of its memory held"
    return Check(name, "ok", evidence, title=title)
