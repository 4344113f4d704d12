"""The machine fingerprint: what a run ran on, captured at its start.

    fp = tfres.fingerprint()
    fp.cpu["usable_cores"], fp.memory["cgroup_memory_limit_bytes"], fp.gpus, fp.gpus_reason

Sections (the names every record, report and comparison read): ``host``, ``cpu``,
``memory``, ``gpus`` (+ ``gpus_reason``), ``tensorflow``, ``numpy``, ``blas``, ``env`` and
``load``. Each dict section says how it was read in ``"source"`` and carries ``"error"``
when it could not be; the list and mapping sections keep theirs beside them
(``gpus_source``, ``blas_source``, ``blas_error``, ``env_source``). Nothing here raises
because something cannot be read. Environment variables whose names suggest a secret are
never captured: records get shared between people.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from tfres.backends import blas, host, nvml
from tfres.version import __version__

__all__ = [
    "Fingerprint",
    "fingerprint",
    "capture_env",
    "is_secret_name",
    "tf_config_shape",
    "ENV_PREFIXES",
    "TF_NAMES",
]

log = logging.getLogger("tfres")

#: Variables with these prefixes change how CUDA and the BLAS/OpenMP runtimes behave. ``TF_``
#: is not one: Terraform uses it too (``TF_VAR_db_password``); see :data:`TF_NAMES`.
ENV_PREFIXES = (
    "CUDA_",
    "CUDNN_",
    "NVIDIA_",
    "NCCL_",
    "XLA_",
    "OMP_",
    "KMP_",
    "MKL_",
    "OPENBLAS_",
    "GOTO_",
    "BLIS_",
    "KERAS_",
    "TFRES_",
)
#: ... and so do these exact names.
ENV_NAMES = (
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "PYTHONHASHSEED",
    "MALLOC_ARENA_MAX",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
)
#: The TensorFlow variables tfres knows; ``TF_CONFIG`` is kept as its cluster's shape only.
TF_NAMES = (
    "TF_CONFIG",
    "TF_CPP_MAX_VLOG_LEVEL",
    "TF_CPP_MIN_LOG_LEVEL",
    "TF_CPP_VMODULE",
    "TF_CUDNN_DETERMINISTIC",
    "TF_CUDNN_USE_AUTOTUNE",
    "TF_DETERMINISTIC_OPS",
    "TF_DISABLE_MKL",
    "TF_ENABLE_AUTO_MIXED_PRECISION",
    "TF_ENABLE_ONEDNN_OPTS",
    "TF_FORCE_GPU_ALLOW_GROWTH",
    "TF_FORCE_UNIFIED_MEMORY",
    "TF_GPU_ALLOCATOR",
    "TF_GPU_HOST_MEM_LIMIT_IN_MB",
    "TF_GPU_THREAD_COUNT",
    "TF_GPU_THREAD_MODE",
    "TF_NUM_INTEROP_THREADS",
    "TF_NUM_INTRAOP_THREADS",
    "TF_USE_LEGACY_KERAS",
    "TF_XLA_FLAGS",
    "TF2_BEHAVIOR",
)
#: A name containing any of these (any case) is never captured, whatever its prefix.
SECRET_WORDS = (
    "TOKEN",
    "KEY",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
)
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s:]+:[^/@\s]+@")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name suggests it holds a secret."""
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


def capture_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The behaviour-changing environment variables, secrets left out.

    Kept: :data:`ENV_PREFIXES`, :data:`ENV_NAMES` and :data:`TF_NAMES` (not every ``TF_``
    name: ``TF_VAR_*`` are Terraform's). Dropped: any name with a word of
    :data:`SECRET_WORDS`. A password inside a URL value (``scheme://user:pass@host``) is
    masked. ``TF_CONFIG`` keeps only its shape (see :func:`tf_config_shape`). Sorted by name.
    """
    environ = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for name in sorted(environ):
        if is_secret_name(name):
            continue
        if name == "TF_CONFIG":
            out[name] = tf_config_shape(environ[name])
        elif name in ENV_NAMES or name in TF_NAMES or name.startswith(ENV_PREFIXES):
            out[name] = _URL_USERINFO.sub(r"\1***@", environ[name])
    return out


def tf_config_shape(text: str) -> str:
    """``TF_CONFIG`` without addresses or extra keys: the roles' sizes and this task.

    ``{"cluster": {"worker": ["h1:1", "h2:1"]}, "task": {"type": "worker", "index": 1}}``
    gives ``{"cluster": {"worker": 2}, "task": {"index": 1, "type": "worker"}}``.
    """
    try:
        config = json.loads(text)
    except ValueError:
        return "(not valid JSON)"
    if not isinstance(config, dict):
        return "(not a JSON object)"
    cluster = config.get("cluster")
    shape: dict[str, Any] = {}
    if isinstance(cluster, dict):
        shape["cluster"] = {
            str(role): len(hosts) if isinstance(hosts, (list, dict)) else None
            for role, hosts in cluster.items()
        }
    task = config.get("task")
    if isinstance(task, dict):
        shape["task"] = {
            key: task[key]
            for key in ("type", "index")
            if isinstance(task.get(key), (str, int)) and not isinstance(task.get(key), bool)
        }
    return json.dumps(shape, sort_keys=True)


@dataclass(frozen=True)
class Fingerprint:
    """The machine a run ran on (see the module docstring for the sections).

    ``gpus`` is empty on a machine without a usable NVIDIA driver, and ``gpus_reason`` says
    why. ``tensorflow["installed"]`` is False without TensorFlow. :meth:`from_dict` accepts
    fingerprints from older tfres versions (missing sections are empty) and keeps keys it
    does not know in ``extra``.
    """

    host: dict[str, Any] = field(default_factory=dict)
    cpu: dict[str, Any] = field(default_factory=dict)
    memory: dict[str, Any] = field(default_factory=dict)
    gpus: list[dict[str, Any]] = field(default_factory=list)
    gpus_reason: str | None = None
    gpus_source: str | None = None
    #: PCI addresses of NVIDIA GPUs on the bus, seen even without a driver (None: unreadable)
    gpus_pci: list[str] | None = None
    tensorflow: dict[str, Any] = field(default_factory=dict)
    numpy: dict[str, Any] = field(default_factory=dict)
    blas: list[dict[str, Any]] = field(default_factory=list)
    blas_source: str | None = None
    blas_error: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    env_source: str | None = None
    load: dict[str, Any] = field(default_factory=dict)
    #: UTC time of capture and how long it took
    taken_at: str | None = None
    took_seconds: float | None = None
    tfres_version: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for f in fields(self):
            if f.name != "extra":
                d[f.name] = getattr(self, f.name)
        for key, value in self.extra.items():
            d.setdefault(key, value)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Fingerprint:
        known = {f.name for f in fields(cls)} - {"extra"}
        kwargs = {k: v for k, v in d.items() if k in known}
        extra = {k: v for k, v in d.items() if k not in known}
        return cls(**kwargs, extra=extra)

    @property
    def hostname(self) -> str | None:
        return self.host.get("hostname")


def _guarded(name: str, source: str, read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``read()``, or ``{"source", "error"}`` when it fails: a fingerprint never raises."""
    try:
        return read()
    except Exception as err:
        log.debug("fingerprint: section %s failed", name, exc_info=True)
        return {"source": source, "error": f"{type(err).__name__}: {err}"}


def fingerprint(
    *,
    tensorflow: bool = True,
    processes: bool = True,
    gpus: bool = True,
    import_tensorflow: bool = False,
    load_window_seconds: float = 0.2,
) -> Fingerprint:
    """Capture this machine's fingerprint.

    - ``tensorflow=False`` leaves the ``tensorflow`` section out (``{"skipped": True}``).
      With the default ``import_tensorflow=False`` TensorFlow is read from the imported
      module if this process already imported it, else from its package files without
      importing it (fast; then ``physical_devices`` is ``None``). ``import_tensorflow=True``
      imports it to list the devices, which takes a few seconds the first time, as
      ``tfres env`` does. The runtime is never started: device settings can still change.
    - ``processes=False`` skips the ``load`` section (top processes over
      ``load_window_seconds``, measured while the other sections are read).
    - ``gpus=False`` does not touch NVML.

    With no NVIDIA driver, ``gpus`` is ``[]`` and ``gpus_reason`` says why.
    """

    t0 = time.perf_counter()
    probe = None
    if processes:
        try:
            probe = host.LoadProbe(window_seconds=load_window_seconds).start()
        except Exception as err:
            log.debug("fingerprint: load probe failed to start: %s", err)
    env = capture_env()
    limits = _limits()
    sections: dict[str, Any] = {
        "host": _guarded("host", "platform", host.host_facts),
        "cpu": _guarded("cpu", "psutil, /proc", lambda: host.cpu_facts(limits=limits)),
        "memory": _guarded("memory", "psutil", lambda: host.memory_facts(limits=limits)),
    }
    if gpus:
        sections.update(_gpus())
    else:
        sections.update(gpus=[], gpus_reason="not read (fingerprint(gpus=False))", gpus_source=None)
    if tensorflow:
        from tfres.backends.tf import tensorflow_facts

        sections["tensorflow"] = _guarded(
            "tensorflow",
            "tensorflow",
            lambda: tensorflow_facts(import_tensorflow=import_tensorflow),
        )
    else:
        sections["tensorflow"] = {"source": None, "skipped": True}
    sections.update(_numpy_and_blas())
    if probe is not None:
        sections["load"] = _guarded("load", "psutil", probe.finish)
    else:
        sections["load"] = (
            {"source": None, "skipped": True}
            if not processes
            else {
                "source": "psutil",
                "error": "the process table could not be read",
            }
        )
    return Fingerprint(
        **sections,
        env=env,
        env_source="os.environ (secret-looking names never captured)",
        taken_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        took_seconds=round(time.perf_counter() - t0, 3),
        tfres_version=__version__,
    )


def _limits() -> Any:

    try:
        return host.cgroup_limits()
    except Exception as err:
        log.debug("fingerprint: cgroup limits unreadable: %s", err)
        return host.CgroupLimits()


def _gpus() -> dict[str, Any]:

    try:
        found, reason = nvml.gpu_inventory()
    except Exception as err:  # the inventory guards NVML; this is the last line of defence
        found, reason = [], f"NVML could not be read: {type(err).__name__}: {err}"
    try:
        pci = host.nvidia_pci_devices()
    except Exception as err:
        log.debug("fingerprint: PCI bus unreadable: %s", err)
        pci = None
    return {
        "gpus": found,
        "gpus_reason": reason,
        "gpus_source": "NVML (nvidia-ml-py); PCI bus from /sys/bus/pci",
        "gpus_pci": pci,
    }


def _numpy_and_blas() -> dict[str, Any]:

    out: dict[str, Any] = {
        "numpy": _guarded("numpy", "numpy", blas.numpy_facts),
        "blas_source": "threadpoolctl",
        "blas_error": None,
    }
    try:
        out["blas"] = blas.blas_pools()
    except Exception as err:
        out["blas"] = []
        out["blas_error"] = f"{type(err).__name__}: {err}"
    return out
