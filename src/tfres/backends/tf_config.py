"""TensorFlow's device settings: read them, and change them before the runtime starts.

The only module through which :func:`tfres.configure` touches ``tf.config``. Reading never
starts the TensorFlow runtime (``list_physical_devices`` and the ``get_*`` functions do not);
the setters raise ``RuntimeError`` once it has started, which is why :mod:`tfres.devices.configure`
compares with :func:`current_settings` first.

GPU indices are positions in ``tf.config.list_physical_devices("GPU")``: the GPUs that
``CUDA_VISIBLE_DEVICES`` leaves, in its order.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from tfres.backends.tf import load_tensorflow, runtime_started
from tfres.errors import MissingDependencyError

__all__ = [
    "tensorflow",
    "runtime_started",
    "runtime_start_cause",
    "gpu_count",
    "current_settings",
    "effective_threads",
    "set_visible_gpus",
    "set_memory_growth",
    "set_gpu_memory_limits",
    "set_logical_cpus",
    "set_threads",
    "set_log_device_placement",
    "set_growth_by_environment",
    "MIB",
    "GROWTH_ENV",
]

log = logging.getLogger("tfres")

#: TensorFlow's ``memory_limit`` is a number of MiB (it multiplies by 2**20).
MIB = 1 << 20
#: read by TensorFlow when it creates its GPU allocators (at runtime start); unlike
#: set_memory_growth it combines with a memory limit: the allocator grows up to the limit
GROWTH_ENV = "TF_FORCE_GPU_ALLOW_GROWTH"


def tensorflow(purpose: str = "device configuration") -> Any:
    """The ``tensorflow`` module, through :func:`tfres.backends.tf.load_tensorflow`.

    The one place a missing TensorFlow becomes a :class:`MissingDependencyError` naming
    ``purpose`` and the extra to install; every backend that needs the module calls this.
    """
    try:
        return load_tensorflow()
    except ImportError as err:
        raise MissingDependencyError("tensorflow", purpose, "cpu") from err


def runtime_start_cause() -> str:
    """A guess, in words, at what started the runtime (for :class:`TooLateError` messages)."""
    keras = sys.modules.get("keras")
    if keras is not None:
        try:
            from keras.src.backend.common import global_state

            if global_state.get_global_attribute("object_name_uids"):
                return "a Keras model or layer was built before configure()"
        except Exception:  # keras 2 or a layout we do not know: fall through to the guess
            pass
    return (
        "a tensor was created or the logical devices were listed "
        "(tf.config.list_logical_devices) before configure()"
    )


def gpu_count() -> int:
    """How many GPUs TensorFlow can use (0 on a CPU build or with no usable driver)."""
    return len(tensorflow().config.list_physical_devices("GPU"))


def _env_threads(name: str) -> int:
    try:
        value = int(os.environ.get(name, "0"))
    except ValueError:
        return 0
    return max(0, value)


def effective_threads(setting: int, env_name: str) -> int:
    """The thread setting TensorFlow will use: the tf.config value, else the env var, else 0."""
    return setting or _env_threads(env_name)


def current_settings() -> dict[str, Any]:
    """The device settings as TensorFlow holds them now; never starts the runtime.

    ``visible_gpus``: indices of the visible GPUs; ``gpu_memory_growth``: {index: bool};
    ``gpu_memory_limit_bytes``: {index: bytes} for GPUs split into one logical device with a
    limit; ``logical_gpus``: {index: count}; ``logical_cpus``: the number of logical CPUs
    (1 when not split); threads as ``tf.config.threading`` returns them, with the
    ``TF_NUM_*_THREADS`` variables standing in for 0.
    """
    tf = tensorflow()
    gpus = tf.config.list_physical_devices("GPU")
    visible = tf.config.get_visible_devices("GPU")
    growth: dict[int, bool] = {}
    limits: dict[int, int] = {}
    logical_gpus: dict[int, int] = {}
    for i, gpu in enumerate(gpus):
        try:
            growth[i] = bool(tf.config.experimental.get_memory_growth(gpu))
        except (ValueError, RuntimeError):
            growth[i] = False
        configs = tf.config.get_logical_device_configuration(gpu) or []
        logical_gpus[i] = max(1, len(configs))
        if len(configs) == 1 and configs[0].memory_limit is not None:
            limits[i] = int(configs[0].memory_limit) * MIB
    cpu = tf.config.list_physical_devices("CPU")[0]
    cpu_configs = tf.config.get_logical_device_configuration(cpu) or []
    from tensorflow.python.eager import context

    return {
        "visible_gpus": [gpus.index(g) for g in visible if g in gpus],
        "gpu_memory_growth": growth,
        "gpu_memory_limit_bytes": limits,
        "logical_gpus": logical_gpus,
        "logical_cpus": max(1, len(cpu_configs)),
        "intra_op_threads": effective_threads(
            int(tf.config.threading.get_intra_op_parallelism_threads()), "TF_NUM_INTRAOP_THREADS"
        ),
        "inter_op_threads": effective_threads(
            int(tf.config.threading.get_inter_op_parallelism_threads()), "TF_NUM_INTEROP_THREADS"
        ),
        "log_device_placement": bool(context.context().log_device_placement),
        "growth_by_environment": os.environ.get(GROWTH_ENV, "").strip().lower() == "true",
    }


def set_visible_gpus(indices: Sequence[int]) -> None:
    """Make only these GPUs visible to TensorFlow (``tf.config.set_visible_devices``)."""
    tf = tensorflow()
    gpus = tf.config.list_physical_devices("GPU")
    tf.config.set_visible_devices([gpus[i] for i in indices], "GPU")


def set_memory_growth(growth: dict[int, bool]) -> None:
    """Turn memory growth on or off per GPU (``tf.config.experimental.set_memory_growth``)."""
    tf = tensorflow()
    gpus = tf.config.list_physical_devices("GPU")
    for index, on in growth.items():
        tf.config.experimental.set_memory_growth(gpus[index], bool(on))


def set_gpu_memory_limits(
    limits: dict[int, int], *, logical_gpus: dict[int, int] | None = None
) -> None:
    """Give each GPU a memory limit: one (or ``logical_gpus[i]``) logical device of that size.

    The limit is rounded down to whole MiB, TensorFlow's unit.
    """
    tf = tensorflow()
    gpus = tf.config.list_physical_devices("GPU")
    counts = logical_gpus or {}
    for index in sorted(set(limits) | set(counts)):
        mib = limits[index] // MIB if index in limits else None
        configs = [tf.config.LogicalDeviceConfiguration(memory_limit=mib)] * counts.get(index, 1)
        tf.config.set_logical_device_configuration(gpus[index], configs)


def set_logical_cpus(count: int) -> None:
    """Split the physical CPU into ``count`` logical CPU devices (``CPU:0`` ... ``CPU:n-1``)."""
    tf = tensorflow()
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(count)]
    )


def set_threads(*, intra_op: int | None = None, inter_op: int | None = None) -> None:
    """Size TensorFlow's intra-op and inter-op thread pools (0 lets TensorFlow choose)."""
    tf = tensorflow()
    if intra_op is not None:
        tf.config.threading.set_intra_op_parallelism_threads(int(intra_op))
    if inter_op is not None:
        tf.config.threading.set_inter_op_parallelism_threads(int(inter_op))


def set_growth_by_environment() -> None:
    """Memory growth on every GPU through ``TF_FORCE_GPU_ALLOW_GROWTH=true`` (before start)."""
    os.environ[GROWTH_ENV] = "true"


def set_log_device_placement(on: bool) -> None:
    """Log the device of every op TensorFlow runs (``tf.debugging.set_log_device_placement``)."""
    tensorflow().debugging.set_log_device_placement(bool(on))
