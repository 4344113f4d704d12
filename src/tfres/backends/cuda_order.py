"""Which GPU is which: CUDA's numbering (what ``CUDA_VISIBLE_DEVICES`` and TensorFlow's
``GPU:i`` count in) mapped to NVML's indices.

NVML numbers GPUs by PCI bus id. CUDA numbers them fastest first unless
``CUDA_DEVICE_ORDER=PCI_BUS_ID``, and ``CUDA_VISIBLE_DEVICES=1`` means CUDA's device 1, not
NVML's; TensorFlow's ``GPU:0`` is the first visible one. So on a machine with two GPU
models, ``GPU:0`` may well be NVML's GPU 1. The two are matched through PCI bus ids.
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any

from tfres.backends.nvml import (
    _handle,
    _nvml,
    _optional,
    _text,
    bus_key,
    device_count,
    pci_bus_id,
)

__all__ = ["cuda_order", "visible_indices", "tf_gpu_indices"]


_CUDA_QUERY = """
import ctypes, json
cuda = ctypes.CDLL("libcuda.so.1")
if cuda.cuInit(0) != 0:
    raise SystemExit(1)
count = ctypes.c_int()
cuda.cuDeviceGetCount(ctypes.byref(count))
out = []
for i in range(count.value):
    dev = ctypes.c_int()
    buf = ctypes.create_string_buffer(64)
    cuda.cuDeviceGet(ctypes.byref(dev), i)
    cuda.cuDeviceGetPCIBusId(buf, 64, dev)
    out.append(buf.value.decode())
print(json.dumps(out))
"""


def _cuda_driver_order(order: str) -> list[str] | None:
    """PCI bus ids in CUDA's numbering, asked of the CUDA driver in a child process (so this
    process never initialises CUDA); None where there is no CUDA driver."""
    import json
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env["CUDA_DEVICE_ORDER"] = order
    try:
        out = subprocess.run(
            [sys.executable, "-c", _CUDA_QUERY], env=env, capture_output=True, timeout=30
        )
        return [bus_key(b) for b in json.loads(out.stdout)] if out.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def _model(nv: Any, index: int) -> tuple[str | None, tuple[int, ...] | None]:
    """(name, compute capability) of one GPU, what CUDA's fastest-first order looks at."""
    handle = _handle(index)
    name = _optional(nv, partial(nv.nvmlDeviceGetName, handle))
    cc = _optional(nv, partial(nv.nvmlDeviceGetCudaComputeCapability, handle))
    return (None if name is None else _text(name)), (None if cc is None else tuple(cc))


def cuda_order(count: int, order: str | None = None) -> tuple[list[int], str]:
    """NVML indices in the order CUDA numbers the GPUs, and how that order is known.

    NVML numbers GPUs by PCI bus id; CUDA (and so TensorFlow) numbers them fastest first
    unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (``order``, default: the variable). With one GPU
    model the two agree. With several models the CUDA driver is asked; without one, the
    order is guessed from compute capability and the text says so.
    """
    order = (order if order is not None else os.environ.get("CUDA_DEVICE_ORDER")) or ""
    order = "PCI_BUS_ID" if order.strip().upper() == "PCI_BUS_ID" else "FASTEST_FIRST"
    nv = _nvml()
    buses = {i: pci_bus_id(i) for i in range(count)}
    by_bus = sorted(range(count), key=lambda i: (buses[i] is None, buses[i] or "", i))
    if order == "PCI_BUS_ID" or count <= 1:
        return by_bus, "PCI bus order"
    models = {i: _model(nv, i) for i in range(count)}
    if len(set(models.values())) == 1:
        return by_bus, "one GPU model: fastest first is PCI bus order"
    asked = _cuda_driver_order(order)
    if asked is not None and sorted(asked) == sorted(b for b in buses.values() if b):
        nvml_of = {b: i for i, b in buses.items()}
        return [nvml_of[b] for b in asked], "asked of the CUDA driver"
    guess = sorted(by_bus, key=lambda i: tuple(-x for x in (models[i][1] or (0, 0))))
    return guess, "guessed (no CUDA driver to ask): highest compute capability first"


def visible_indices(count: int, env: str | None = None, *, order: str | None = None) -> list[int]:
    """The NVML indices that ``CUDA_VISIBLE_DEVICES`` leaves visible, in CUDA's order.

    TensorFlow's ``GPU:i`` is the i-th of them. Integers are CUDA ordinals (see
    :func:`cuda_order`: fastest first by default, bus order with
    ``CUDA_DEVICE_ORDER=PCI_BUS_ID``), not NVML indices; ``GPU-...`` UUIDs (or unique
    prefixes) are matched against the devices. Like CUDA, the list stops at the first entry
    that names no device. ``env`` unset means every device, in CUDA's order.
    """
    value = os.environ.get("CUDA_VISIBLE_DEVICES") if env is None else env
    ordinals = cuda_order(count, order)[0] if count > 1 else list(range(count))
    if value is None:
        return ordinals
    uuids: dict[int, str] | None = None
    out: list[int] = []
    for item in (part.strip() for part in value.split(",")):
        if not item:
            break
        if item.lstrip("-").isdigit():
            ordinal = int(item)
            index = ordinals[ordinal] if 0 <= ordinal < count else -1
        else:
            if uuids is None:
                nv = _nvml()
                uuids = {i: _text(nv.nvmlDeviceGetUUID(_handle(i))) for i in range(count)}
            matches = [i for i, u in uuids.items() if u.startswith(item)]
            if len(matches) != 1:
                break
            index = matches[0]
        if not 0 <= index < count or index in out:
            break
        out.append(index)
    return out


def tf_gpu_indices(env: dict[str, str] | None = None) -> list[int]:
    """NVML index of TensorFlow's ``GPU:0``, ``GPU:1``, ... for a process with ``env``.

    ``env`` is that process's environment (this one's by default): its
    ``CUDA_VISIBLE_DEVICES`` and ``CUDA_DEVICE_ORDER``. Raises :class:`NvmlUnavailable`.
    """
    env = dict(os.environ) if env is None else env
    return visible_indices(
        device_count(), env.get("CUDA_VISIBLE_DEVICES"), order=env.get("CUDA_DEVICE_ORDER") or ""
    )
