"""``child_environment()``: TensorFlow device settings for another program (``tfres run``).

Settings TensorFlow reads from the environment go there. The others are injected: the
folder :data:`INJECT_DIR` goes first on the child's ``PYTHONPATH``, Python runs its
``sitecustomize`` at start-up, and that installs a one-shot import hook which applies the
settings (JSON in ``TFRES_CONFIGURE``) through ``tf.config`` the moment ``tensorflow``
finishes importing, before anything can start the runtime. It chains to any other
``sitecustomize`` and needs no tfres in the child (see :mod:`tfres.devices.inject.sitecustomize`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tfres.backends import nvml
from tfres.devices import settings
from tfres.errors import NoGpuError
from tfres.units import format_bytes

__all__ = ["child_environment", "instrument_environment", "INJECT_DIR", "CONFIG_ENV"]

#: the folder put first on a child's PYTHONPATH; its sitecustomize applies ``CONFIG_ENV``
INJECT_DIR = Path(__file__).resolve().parent / "inject"
#: the variable that carries the injected settings to the child, as JSON
CONFIG_ENV = "TFRES_CONFIGURE"


def child_environment(
    *,
    gpu_memory_growth: bool | Sequence[int] | None = None,
    gpu_memory_limit_bytes: int | str | Mapping[int | str, int | str] | None = None,
    visible_gpus: Sequence[int] | None = None,
    intra_op_threads: int | None = None,
    inter_op_threads: int | None = None,
    log_device_placement: bool | None = None,
    logical_cpus: int | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[dict[str, str], list[str]]:
    """The environment that gives a child program these settings, and how, in words.

    Returns ``(variables to set, description lines)``. Settings TensorFlow reads from the
    environment use it (``TF_FORCE_GPU_ALLOW_GROWTH``, ``CUDA_VISIBLE_DEVICES``,
    ``TF_NUM_INTRAOP_THREADS``, ``TF_NUM_INTEROP_THREADS``; ``OMP_NUM_THREADS`` follows the
    intra-op count unless already set). The others (a GPU memory limit, growth on some GPUs,
    device-placement logging, logical CPUs) are injected: :data:`INJECT_DIR` goes first on
    ``PYTHONPATH`` and its ``sitecustomize`` applies ``TFRES_CONFIGURE`` through ``tf.config``
    right after the child imports tensorflow (it chains to any other ``sitecustomize``).
    ``visible_gpus`` are nvidia-smi indices, or positions in our ``CUDA_VISIBLE_DEVICES`` if
    set; one that does not exist raises :class:`~tfres.errors.NoGpuError`. ``env`` is the
    environment the child would inherit (default: ours).

        env, how = child_environment(gpu_memory_growth=True, intra_op_threads=2)
        subprocess.run(cmd, env={**os.environ, **env})
    """
    base = dict(os.environ if env is None else env)
    growth = settings.growth(gpu_memory_growth)
    limits = settings.limits(gpu_memory_limit_bytes)
    visible = settings.indices("visible_gpus", visible_gpus)
    intra = settings.count("intra_op_threads", intra_op_threads, minimum=0)
    inter = settings.count("inter_op_threads", inter_op_threads, minimum=0)
    n_cpus = settings.count("logical_cpus", logical_cpus, minimum=1)
    out: dict[str, str] = {}
    lines: list[str] = []
    inject: dict[str, Any] = {}
    if visible is not None:
        out["CUDA_VISIBLE_DEVICES"] = _child_visible(visible, base) if visible else "-1"
        lines.append(
            f"visible GPUs {visible or 'none'}: CUDA_VISIBLE_DEVICES={out['CUDA_VISIBLE_DEVICES']}"
        )
    if growth is True or growth is False:
        out["TF_FORCE_GPU_ALLOW_GROWTH"] = "true" if growth else "false"
        lines.append(
            f"GPU memory growth {'on' if growth else 'off'}: "
            f"TF_FORCE_GPU_ALLOW_GROWTH={out['TF_FORCE_GPU_ALLOW_GROWTH']}"
        )
    elif growth:
        inject["gpu_memory_growth"] = {str(i): True for i in growth}
        lines.append(
            f"GPU memory growth on GPUs {growth}: "
            "injected (tf.config.experimental.set_memory_growth)"
        )
    if limits is not None:
        per = {"*": limits} if isinstance(limits, int) else {str(i): v for i, v in limits.items()}
        if growth and not isinstance(growth, bool):  # per-GPU growth goes through tf.config,
            limited = set(growth) if isinstance(limits, int) else set(growth) & set(limits)
            if limited:  # which refuses it on a GPU with a limit
                raise ValueError(
                    f"GPU {min(limited)} has both memory growth and a memory limit; use "
                    "growth on every GPU (it then grows up to the limit) or choose one"
                )
        inject["gpu_memory_limit_bytes"] = per
        shown = ", ".join(
            f"{'every GPU' if k == '*' else 'GPU ' + k} {format_bytes(v)}" for k, v in per.items()
        )
        lines.append(
            f"GPU memory limit ({shown}): injected (tf.config.set_logical_device_configuration)"
        )
    for name, value, var in (
        ("intra-op threads", intra, "TF_NUM_INTRAOP_THREADS"),
        ("inter-op threads", inter, "TF_NUM_INTEROP_THREADS"),
    ):
        if value is not None:
            out[var] = str(value)
            lines.append(f"{name} {value}: {var}={value}")
    if intra and "OMP_NUM_THREADS" not in base:
        out["OMP_NUM_THREADS"] = str(intra)
        lines.append(f"numpy/BLAS/OpenMP threads {intra}: OMP_NUM_THREADS={intra}")
    if log_device_placement is not None:
        inject["log_device_placement"] = bool(log_device_placement)
        lines.append(
            f"device-placement logging {'on' if log_device_placement else 'off'}: injected"
        )
    if n_cpus is not None:
        inject["logical_cpus"] = n_cpus
        lines.append(
            f"{n_cpus} logical CPUs: injected (tf.config.set_logical_device_configuration)"
        )
    if inject:
        out[CONFIG_ENV] = json.dumps(inject, sort_keys=True)
        old = base.get("PYTHONPATH")
        out["PYTHONPATH"] = str(INJECT_DIR) + (os.pathsep + old if old else "")
        lines.append(
            f"injected settings: {INJECT_DIR}/sitecustomize.py is first on PYTHONPATH and applies "
            f"{CONFIG_ENV} with tf.config right after a Python child imports tensorflow "
            "(no tfres import needed in the child; other programs only get the variables)"
        )
    return out, lines


def instrument_environment(
    base: Mapping[str, str],
    *,
    events_file: str,
    profile: tuple[int, int] | None = None,
    profile_dir: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """The variables that turn on the instrumentation hook in a Python child.

    :data:`INJECT_DIR` goes first on ``PYTHONPATH`` (once); ``TFRES_INSTRUMENT=1`` makes its
    ``sitecustomize`` load ``_tfres_instrument``, which writes phases, notes and the profiler
    window to ``events_file``; ``profile`` ``(A, B)`` asks for a TensorBoard profile of
    train steps A-B in ``profile_dir`` (``TFRES_PROFILE``, ``TFRES_PROFILE_DIR``).
    """
    out = {"TFRES_INSTRUMENT": "1", "TFRES_EVENTS_FILE": str(events_file)}
    old = base.get("PYTHONPATH")
    parts = old.split(os.pathsep) if old else []
    if str(INJECT_DIR) not in parts:
        out["PYTHONPATH"] = os.pathsep.join([str(INJECT_DIR), *parts])
    if profile is not None:
        out["TFRES_PROFILE"] = f"{profile[0]}:{profile[1]}"
        out["TFRES_PROFILE_DIR"] = str(Path(profile_dir or "tfres-profile").resolve())
    return out


def _child_visible(visible: list[int], base: Mapping[str, str]) -> str:
    """Map indices to the child's CUDA_VISIBLE_DEVICES, checking that the GPUs exist."""
    ours = base.get("CUDA_VISIBLE_DEVICES")
    if ours is not None and ours.strip() not in ("",):
        entries = [e.strip() for e in ours.split(",") if e.strip()]
        entries = [e for e in entries if e != "-1"]
        where = f"CUDA_VISIBLE_DEVICES={ours!r} leaves {len(entries)}"
        count = len(entries)
    else:
        try:
            count = nvml.device_count()
            where = f"NVML sees {count}"
        except nvml.NvmlUnavailable as err:
            raise NoGpuError(
                f"visible_gpus={visible!r} but no NVIDIA GPU can be used here ({err})"
            ) from err
        entries = [str(i) for i in range(count)]
    missing = [i for i in visible if i >= count]
    if missing:
        raise NoGpuError(
            f"visible_gpus={visible!r} names GPU {missing[0]} but {where} GPU(s); "
            f"pick indices below {count}"
        )
    return ",".join(entries[i] for i in visible)
