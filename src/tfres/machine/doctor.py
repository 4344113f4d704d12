"""``tfres doctor``: what is misconfigured here, with the evidence and the fix.

    for check in tfres.doctor():
        print(check.status, check.title, check.evidence, check.fix)

Each :class:`Check` is ``ok``, ``warn``, ``fail`` or ``skip`` (does not apply here), with
the evidence read from the machine fingerprint and a concrete fix (a command or a line of
code). The question asked most, "why does TensorFlow not use my GPU?", gets the known
cause that applies: a CPU-only wheel, missing CUDA libraries, ``CUDA_VISIBLE_DEVICES``
hiding the GPU, a driver too old for TensorFlow's CUDA, or native Windows with TF >= 2.11.
"""

from __future__ import annotations

from tfres.machine import doctor_gpu
from tfres.machine.checks import Check, exit_status, tf_facts
from tfres.machine.fingerprint import Fingerprint, fingerprint
from tfres.units import format_bytes

__all__ = [
    "Check",
    "doctor",
    "exit_status",
    "LOW_MEMORY_FRACTION",
    "LOW_MEMORY_BYTES",
    "SWAP_WARN_BYTES",
]

#: Warn when less than this share of memory is available ...
LOW_MEMORY_FRACTION = 0.10
#: ... or less than this many bytes.
LOW_MEMORY_BYTES = 1 << 30
#: Warn when more swap than this is in use (a little is normal on a long-running host).
SWAP_WARN_BYTES = 256 << 20


def doctor(*, fp: Fingerprint | None = None) -> list[Check]:
    """Run every check against ``fp`` (a fresh fingerprint by default; TF is imported).

    Pass the fingerprint of a record to check the machine a run ran on; the CUDA library
    look-up (for the missing-libraries cause) is always done on this machine.
    """
    if fp is None:
        fp = fingerprint(import_tensorflow=True, processes=False)
    return [
        _tensorflow_installed(fp),
        doctor_gpu.cuda_build(fp),
        doctor_gpu.gpu_visible(fp),
        doctor_gpu.cuda_pairing(fp),
        doctor_gpu.driver_cuda(fp),
        doctor_gpu.gpu_memory_held(fp),
        _cpu_quota(fp),
        _oversubscription(fp),
        _swap(fp),
        _free_memory(fp),
    ]


def _blas_threads(fp: Fingerprint) -> int | None:
    counts = [int(p["num_threads"]) for p in fp.blas if isinstance(p.get("num_threads"), int)]
    return max(counts) if counts else None


def _intra_threads(fp: Fingerprint) -> int | None:
    value = tf_facts(fp).get("intra_op_threads_effective")
    return value if isinstance(value, int) and value > 0 else None


# -- checks ----------------------------------------------------------------------------
def _tensorflow_installed(fp: Fingerprint) -> Check:
    tf = tf_facts(fp)
    title = "TensorFlow installed"
    if tf.get("skipped"):
        return Check(
            "tensorflow_installed", "skip", "TensorFlow was not fingerprinted", title=title
        )
    if not tf.get("installed"):
        reason = tf.get("reason") or "TensorFlow is not installed"
        if fp.gpus:  # NVML sees a GPU: the CUDA build, with its CUDA and cuDNN wheels
            evidence = f"{reason}; {doctor_gpu.nvml_sees(fp)}"
            fix = "pip install 'tfres[gpu]'  (TensorFlow with its CUDA and cuDNN libraries)"
        else:
            evidence = reason
            fix = "pip install 'tfres[cpu]'  (or 'tfres[gpu]' on a machine with an NVIDIA GPU)"
        return Check("tensorflow_installed", "fail", evidence, fix, title)
    if tf.get("error"):
        return Check(
            "tensorflow_installed",
            "fail",
            str(tf["error"]),
            f"reinstall it: pip install --force-reinstall {tf.get('distribution') or 'tensorflow'}",
            title,
        )
    return Check(
        "tensorflow_installed",
        "ok",
        f"{tf.get('distribution') or 'tensorflow'} {tf.get('version')}",
        title=title,
    )


def _cpu_quota(fp: Fingerprint) -> Check:
    name, title = "cpu_quota_threads", "threads fit the container CPU quota"
    quota = (fp.cpu or {}).get("cgroup_cpu_quota_cores")
    if not quota:
        evidence = "no cgroup CPU quota: threads are limited by the cores only"
        return Check(name, "ok", evidence, title=title)
    intra, blas = _intra_threads(fp), _blas_threads(fp)
    pools = [f"{label} {v}" for label, v in (("TensorFlow intra-op", intra), ("BLAS", blas)) if v]
    evidence = f"cgroup CPU quota {quota:g} cores; threads: {', '.join(pools) or 'unknown'}"
    n = max(1, int(quota))
    if (intra and intra > quota) or (blas and blas > quota):
        return Check(
            name,
            "warn",
            evidence + " (more threads than the quota: they are throttled in turn)",
            f"export OMP_NUM_THREADS={n} TF_NUM_INTRAOP_THREADS={n}  or in code: "
            f"tf.config.threading.set_intra_op_parallelism_threads({n})",
            title,
        )
    return Check(name, "ok", evidence, title=title)


def _oversubscription(fp: Fingerprint) -> Check:
    name, title = "thread_oversubscription", "TF and BLAS threads fit the cores"
    cpu = fp.cpu or {}
    cores = cpu.get("usable_cores")
    intra, blas = _intra_threads(fp), _blas_threads(fp)
    if not cores or (intra is None and blas is None):
        return Check(name, "skip", "thread pools or cores unknown", title=title)
    evidence = (
        f"TensorFlow intra-op {intra or 0} + BLAS {blas or 0} threads on {cores:g} usable cores"
    )
    n = max(1, int(cores))
    too_many = [p for p, v in (("TensorFlow", intra), ("BLAS", blas)) if v and v > cores]
    if too_many or (intra or 0) + (blas or 0) > 2 * cores:
        return Check(
            name,
            "warn",
            evidence + (f" ({' and '.join(too_many)} alone exceed the cores)" if too_many else ""),
            f"export OMP_NUM_THREADS={n} OPENBLAS_NUM_THREADS={n} TF_NUM_INTRAOP_THREADS={n}",
            title,
        )
    return Check(name, "ok", evidence + " (each pool at most one thread per core)", title=title)


def _swap(fp: Fingerprint) -> Check:
    name, title = "swap", "swap not in use"
    used = (fp.memory or {}).get("swap_used_bytes")
    if used is None:
        return Check(name, "skip", "swap usage unknown", title=title)
    evidence = f"{format_bytes(used)} of swap in use"
    if used > SWAP_WARN_BYTES:
        return Check(
            name,
            "warn",
            evidence + ": memory pages are on disk, and training that touches them crawls",
            "free memory (close other programs), lower the batch size (tfres batchsize), "
            "or set a budget: tfres run --memory-budget 80% -- python train.py",
            title,
        )
    return Check(name, "ok", evidence, title=title)


def _free_memory(fp: Fingerprint) -> Check:
    name, title = "free_memory", "enough free memory"
    mem = fp.memory or {}
    total, available = mem.get("total_bytes"), mem.get("available_bytes")
    if not total or available is None:
        return Check(name, "skip", "memory figures unknown", title=title)
    limit = mem.get("cgroup_memory_limit_bytes")
    if limit and limit < total:
        total, available = limit, min(available, limit)
    share = available / total
    evidence = f"{format_bytes(available)} available of {format_bytes(total)} ({share:.0%})"
    if limit and limit == total:
        evidence += " (cgroup limit)"
    if share < LOW_MEMORY_FRACTION or available < LOW_MEMORY_BYTES:
        return Check(
            name,
            "warn",
            evidence + ": a training run may be killed for memory",
            "close other programs (tfres env lists the top memory users) or lower the batch size",
            title,
        )
    return Check(name, "ok", evidence, title=title)
