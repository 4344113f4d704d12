"""TensorFlow device access for the placement advisor, the input pipeline and strategies.

Everything here imports TensorFlow lazily (through :func:`tfres.backends.tf.load_tensorflow`)
and is the only place where :mod:`tfres.placement.advisor`, :mod:`tfres.placement.pipeline` and
:mod:`tfres.placement.strategy` touch ``tf.device``, ``tf.config`` or TensorFlow's run metadata.

Device names are written short, the way users type them: ``"CPU:0"``, ``"GPU:1"``.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from tfres.backends.tf import runtime_started
from tfres.backends.tf_config import tensorflow
from tfres.errors import TooLateError

__all__ = [
    "tensorflow",
    "short_device_name",
    "logical_devices",
    "ensure_logical_cpus",
    "call_once",
    "placed_ops",
    "sync_devices",
    "make_strategy",
]

log = logging.getLogger("tfres")

#: what a missing TensorFlow is needed for, in its error message
_PURPOSE = "placement advice"

_DEVICE_RE = re.compile(r"(?:^|/)(?:device:)?(cpu|gpu|tpu)[:/](\d+)$", re.IGNORECASE)


def short_device_name(name: str) -> str:
    """``"/job:localhost/replica:0/task:0/device:CPU:1"`` or ``"gpu:1"`` -> ``"CPU:1"``/``"GPU:1"``.

    Raises ``ValueError`` naming the text when it is not a device name.
    """
    text = str(name).strip()
    match = _DEVICE_RE.search(text)
    if not match:
        raise ValueError(f"cannot read device name {name!r}; write it like 'CPU:0' or 'GPU:1'")
    return f"{match.group(1).upper()}:{int(match.group(2))}"


def logical_devices() -> list[str]:
    """The logical devices TensorFlow will run ops on, e.g. ``["CPU:0", "CPU:1", "GPU:0"]``.

    Listing logical devices starts the TensorFlow runtime (device settings are then fixed).
    """
    tf = tensorflow(_PURPOSE)
    names = [short_device_name(d.name) for d in tf.config.list_logical_devices()]
    return [n for n in names if n.split(":")[0] in ("CPU", "GPU")]


def _physical_cpu(tf: Any) -> Any:
    cpus = tf.config.list_physical_devices("CPU")
    if not cpus:  # pragma: no cover - TensorFlow always has a CPU
        raise RuntimeError("TensorFlow lists no physical CPU")
    return cpus[0]


def ensure_logical_cpus(count: int) -> None:
    """Split the physical CPU into ``count`` logical CPU devices (``CPU:0`` ... ``CPU:n-1``).

    The same ``tf.config`` call as ``tfres.configure(logical_cpus=count)``. A no-op when the
    split is already in place. Must run before the TensorFlow runtime starts: afterwards a different
    count raises :class:`TooLateError`.
    """
    if count < 1:
        raise ValueError(f"logical CPU count must be >= 1 (got {count})")

    tf = tensorflow(_PURPOSE)
    cpu = _physical_cpu(tf)
    if runtime_started():
        have = len([d for d in tf.config.list_logical_devices("CPU")])
        if have == count:
            return
        raise TooLateError(
            f"cannot split the CPU into {count} logical devices: the TensorFlow runtime already "
            f"started with {have}; set it first thing (tfres.configure(logical_cpus={count})) "
            "or restart the Python process"
        )
    current = tf.config.get_logical_device_configuration(cpu)
    if (current is None and count == 1) or (current is not None and len(current) == count):
        return
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(count)]
    )


def on_device(device: str) -> Any:
    """``with on_device("GPU:0"):`` creates the ops inside on ``device`` (``tf.device``)."""
    return tensorflow(_PURPOSE).device(device)


def sync_devices() -> None:
    """Wait until every device finished its queued work (a no-op on CPUs)."""
    tf = tensorflow(_PURPOSE)
    sync = getattr(getattr(tf.test, "experimental", None), "sync_devices", None)
    if sync is None:
        return
    try:
        sync()
    except Exception as err:  # pragma: no cover - only on exotic runtimes
        log.debug("tf.test.experimental.sync_devices failed: %s", err)


def _is_array(value: Any, tf: Any) -> bool:
    if isinstance(value, tf.Variable):
        return False
    if isinstance(value, tf.Tensor):
        return True
    return type(value).__module__ == "numpy" and hasattr(value, "shape") and hasattr(value, "dtype")


def _to_host(value: Any, tf: Any) -> Any:
    if isinstance(value, tf.Tensor) and hasattr(value, "numpy"):
        return value.numpy()
    return value


def call_once(
    fn: Callable[..., Any],
    args: Sequence[Any],
    device: str,
    *,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, float, float]:
    """Call ``fn(*args)`` once on ``device``; seconds of (transfer in, compute, transfer out).

    The array arguments (NumPy arrays, tensors) are copied onto ``device`` with
    ``tf.identity`` under ``tf.device`` (transfer in), ``fn`` is called there (compute), then
    every tensor it returns is copied back to host memory with ``.numpy()`` (transfer out),
    waiting for the device after each part so no part's work leaks into the next.
    """
    tf = tensorflow(_PURPOSE)
    name = "/" + device
    t0 = clock()
    with tf.device(name):
        placed = [tf.identity(a) if _is_array(a, tf) else a for a in args]
    sync_devices()
    t1 = clock()
    with tf.device(name):
        out = fn(*placed)
    sync_devices()
    t2 = clock()
    tf.nest.map_structure(lambda v: _to_host(v, tf), out)
    t3 = clock()
    return t1 - t0, t2 - t1, t3 - t2


#: Op types that move data or mark a function's edges rather than compute.
PLUMBING_OPS = frozenset(
    {
        "_Arg",
        "_Retval",
        "_Send",
        "_Recv",
        "_HostSend",
        "_HostRecv",
        "_DeviceArg",
        "_DeviceRetval",
        "NoOp",
        "Identity",
        "IdentityN",
        "_EagerConst",
    }
)


def _op_type(op: str) -> str:
    """oneDNN rewrites ``MatMul`` into ``_MklMatMul``; show the op users wrote."""
    for prefix in ("_MklNative", "_Mkl"):
        if op.startswith(prefix) and len(op) > len(prefix):
            return op[len(prefix) :]
    return op


def placed_ops(fn: Callable[..., Any], args: Sequence[Any], device: str) -> list[tuple[str, str]]:
    """Where TensorFlow really placed each op of ``fn`` when called under ``tf.device(device)``.

    ``fn`` runs once as a fresh ``tf.function`` with TensorFlow's run metadata on (TensorFlow
    reports a function's graphs only when it is first instantiated, so a ``tf.function`` is
    re-wrapped around its Python function). The partition graphs it reports come after the
    placer and grappler, so each node's device is the one its kernel ran on: the placements
    ``tf.debugging.set_log_device_placement(True)`` prints. Returns ``(op_type, device)``
    pairs; function plumbing (``_Arg``, ``_Send``, ...) is included, callers filter it.
    Raises ``RuntimeError`` when TensorFlow returns no metadata (a changed private API).
    """
    tf = tensorflow(_PURPOSE)
    from tensorflow.python.eager import context

    python_fn = getattr(fn, "python_function", fn)
    graph_fn = tf.function(python_fn)
    name = "/" + device
    with tf.device(name):
        placed = [tf.identity(a) if _is_array(a, tf) else a for a in args]
    ctx = context.context()
    ctx.enable_run_metadata()
    try:
        with tf.device(name):
            graph_fn(*placed)
        sync_devices()
        metadata = ctx.export_run_metadata()
    finally:
        ctx.disable_run_metadata()
    if metadata is None:
        raise RuntimeError("TensorFlow returned no run metadata")
    ops: list[tuple[str, str]] = []
    for function_graph in metadata.function_graphs:
        for graph in function_graph.partition_graphs:
            for node in graph.node:
                try:
                    where = short_device_name(node.device)
                except ValueError:
                    where = node.device or "unplaced"
                ops.append((_op_type(node.op), where))
    return ops


def make_strategy(kind: str, devices: Sequence[str] = ()) -> Any:
    """Create the ``tf.distribute`` strategy ``kind`` over ``devices`` (short names).

    ``kind``: ``"default"``, ``"one_device"``, ``"mirrored"`` or ``"multi_worker_mirrored"``
    (which reads ``TF_CONFIG`` itself and must be created before the runtime starts).
    """
    tf = tensorflow("distribution strategies")
    if kind == "default":
        return tf.distribute.get_strategy()
    if kind == "one_device":
        return tf.distribute.OneDeviceStrategy("/" + devices[0])
    if kind == "mirrored":
        names = ["/" + d for d in devices]
        if all(d.startswith("CPU") for d in devices):
            # NCCL is for GPUs; over logical CPUs, reduce on the first device
            ops = tf.distribute.ReductionToOneDevice(reduce_to_device=names[0])
            return tf.distribute.MirroredStrategy(devices=names, cross_device_ops=ops)
        return tf.distribute.MirroredStrategy(devices=names)
    if kind == "multi_worker_mirrored":
        return tf.distribute.MultiWorkerMirroredStrategy()
    raise ValueError(f"unknown strategy kind {kind!r}")
