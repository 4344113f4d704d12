"""Pick the ``tf.distribute`` strategy that fits what is visible, and say why.

    choice = tfres.strategy()
    print(choice.reason)
    with choice.strategy.scope():
        model = build_model()

The rules, in order:

1. ``TF_CONFIG`` is set: ``MultiWorkerMirroredStrategy`` (the variable is validated first;
   bad JSON or a task missing from the cluster is one clear ``ValueError``).
2. ``devices`` names one device: ``OneDeviceStrategy`` on it.
3. ``devices`` names several: ``MirroredStrategy`` over them (GPUs, or logical CPUs, which
   share the same cores and are useful to test distributed code on a laptop).
4. Nothing named: ``MirroredStrategy`` over all GPUs when there are two or more, else the
   default strategy (one GPU, or the CPU).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tfres.backends import tf_placement as backend
from tfres.backends.tf_config import runtime_started
from tfres.backends.tf_placement import short_device_name
from tfres.errors import NoGpuError, TooLateError

__all__ = ["StrategyChoice", "strategy", "read_tf_config"]

_TF_CONFIG_EXAMPLE = (
    '{"cluster": {"worker": ["host1:12345", "host2:12345"]}, '
    '"task": {"type": "worker", "index": 0}}'
)


@dataclass(frozen=True)
class StrategyChoice:
    """The strategy object, what kind it is, over which devices, and why it was chosen.

    ``kind`` is ``"default"``, ``"one_device"``, ``"mirrored"`` or
    ``"multi_worker_mirrored"``; ``devices`` are this process's devices (short names);
    ``workers`` is the number of workers in ``TF_CONFIG`` (1 without it).
    """

    strategy: Any = field(compare=False, repr=False)
    kind: str
    devices: tuple[str, ...]
    reason: str
    workers: int = 1
    num_replicas: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "strategy": type(self.strategy).__name__,
            "devices": list(self.devices),
            "reason": self.reason,
            "workers": self.workers,
            "num_replicas": self.num_replicas,
        }


def read_tf_config(text: str | None = None) -> dict[str, Any] | None:
    """``TF_CONFIG`` (or ``text``) parsed and checked; ``None`` when it is unset or empty.

    Raises ``ValueError`` with one line saying what is wrong and an example of a good one.
    """
    raw = os.environ.get("TF_CONFIG") if text is None else text
    if raw is None or not raw.strip():
        return None
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"TF_CONFIG is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno}: "
            f"{raw[:60]!r}); set it like {_TF_CONFIG_EXAMPLE}"
        ) from None
    if not isinstance(config, dict):
        raise ValueError(
            f"TF_CONFIG must be a JSON object (got {type(config).__name__}); "
            f"set it like {_TF_CONFIG_EXAMPLE}"
        )
    cluster = config.get("cluster")
    if not isinstance(cluster, dict) or not cluster:
        raise ValueError(f'TF_CONFIG has no "cluster" object; set it like {_TF_CONFIG_EXAMPLE}')
    for role, addresses in cluster.items():
        if not isinstance(addresses, list) or not addresses:
            raise ValueError(
                f"TF_CONFIG cluster {role!r} must be a list of 'host:port' (got {addresses!r})"
            )
        for address in addresses:
            host, sep, port = str(address).rpartition(":")
            if not isinstance(address, str) or not sep or not host or not port.isdigit():
                raise ValueError(
                    f"TF_CONFIG cluster {role!r} has {address!r}; each entry must be 'host:port'"
                )
    task = config.get("task")
    if not isinstance(task, dict):
        raise ValueError(
            'TF_CONFIG has no "task" object saying which member this process is; '
            'add e.g. "task": {"type": "worker", "index": 0}'
        )
    role, index = task.get("type"), task.get("index")
    if role not in cluster:
        raise ValueError(
            f"TF_CONFIG task type {role!r} is not in its cluster (roles: {', '.join(cluster)})"
        )
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(cluster[role]):
        raise ValueError(
            f"TF_CONFIG task index {index!r} is out of range: cluster {role!r} has "
            f"{len(cluster[role])} entries (0 to {len(cluster[role]) - 1})"
        )
    return config


def _names(devices: Sequence[str] | str) -> list[str]:
    items = devices.split(",") if isinstance(devices, str) else list(devices)
    names: list[str] = []
    for item in items:
        if str(item).strip():
            name = short_device_name(str(item))
            if name not in names:
                names.append(name)
    if not names:
        raise ValueError(f"no device named in {devices!r}; write them like ['GPU:0', 'GPU:1']")
    return names


def strategy(*, devices: Sequence[str] | str | None = None) -> StrategyChoice:
    """The fitting ``tf.distribute`` strategy for what is visible, with the reason in words.

    ``devices`` (e.g. ``["GPU:0", "GPU:1"]`` or ``"CPU:0,CPU:1"``) asks for those devices;
    a device TensorFlow does not see is a ``ValueError`` naming the visible ones, a GPU on
    a machine without one :class:`~tfres.errors.NoGpuError`. With ``TF_CONFIG`` set the
    choice is ``MultiWorkerMirroredStrategy``, which TensorFlow requires to be created
    before the runtime starts (before any model or tensor): otherwise
    :class:`~tfres.errors.TooLateError`.

        choice = tfres.strategy()
        with choice.strategy.scope():
            model = build_model()
    """
    config = read_tf_config()
    if config is not None:
        if devices is not None:
            raise ValueError(
                "devices cannot be combined with TF_CONFIG: MultiWorkerMirroredStrategy uses "
                "each worker's local GPUs (or its CPU); choose them with CUDA_VISIBLE_DEVICES"
            )
        return _multi_worker(config)
    visible = backend.logical_devices()
    if devices is not None:
        return _asked_for(_names(devices), visible)
    return _by_what_is_visible(visible)


def _multi_worker(config: dict[str, Any]) -> StrategyChoice:
    """Rule 1: ``TF_CONFIG`` is set, so ``MultiWorkerMirroredStrategy`` (before the runtime)."""
    task = config["task"]
    workers = sum(len(v) for k, v in config["cluster"].items() if k in ("chief", "worker"))
    if runtime_started():
        raise TooLateError(
            "MultiWorkerMirroredStrategy must be created before the TensorFlow runtime "
            "starts (a tensor or model was made first); call tfres.strategy() first thing "
            "in the program"
        )
    made = backend.make_strategy("multi_worker_mirrored")
    local = tuple(backend.short_device_name(d) for d in made.extended.worker_devices)
    return StrategyChoice(
        strategy=made,
        kind="multi_worker_mirrored",
        devices=local,
        reason=(
            f"TF_CONFIG names {workers} worker(s) and this process is {task['type']} "
            f"{task['index']}: MultiWorkerMirroredStrategy keeps a copy of the model on each "
            "and all-reduces gradients every step"
        ),
        workers=workers,
        num_replicas=int(made.num_replicas_in_sync),
    )


def _check_visible(names: list[str], visible: list[str]) -> None:
    """A ``NoGpuError`` or ``ValueError`` for the first asked-for device TensorFlow does not see."""
    has_gpu = any(d.startswith("GPU") for d in visible)
    for name in names:
        if name in visible:
            continue
        if name.startswith("GPU") and not has_gpu:
            raise NoGpuError(
                f"{name} was asked for but TensorFlow sees no GPU here; run `tfres doctor` for why"
            )
        seen = ", ".join(visible)
        raise ValueError(f"device {name!r} is not visible to TensorFlow here (visible: {seen})")


def _asked_for(names: list[str], visible: list[str]) -> StrategyChoice:
    """Rules 2 and 3: one device named (``OneDeviceStrategy``) or several (``MirroredStrategy``)."""
    _check_visible(names, visible)
    if len(names) == 1:
        return StrategyChoice(
            strategy=backend.make_strategy("one_device", names),
            kind="one_device",
            devices=tuple(names),
            reason=f"one device asked for ({names[0]}): OneDeviceStrategy places variables "
            "and computation there",
        )
    made = backend.make_strategy("mirrored", names)
    shared = (
        " (logical CPUs share the same cores: this tests distributed code, it adds no compute)"
        if all(n.startswith("CPU") for n in names)
        else ""
    )
    return StrategyChoice(
        strategy=made,
        kind="mirrored",
        devices=tuple(names),
        reason=f"{len(names)} devices asked for ({', '.join(names)}): MirroredStrategy keeps a "
        f"copy of the model on each and splits every batch between them{shared}",
        num_replicas=int(made.num_replicas_in_sync),
    )


def _by_what_is_visible(visible: list[str]) -> StrategyChoice:
    """Rule 4: mirrored over two or more GPUs, else the default strategy (one GPU or the CPU)."""
    gpus = [d for d in visible if d.startswith("GPU")]
    cpus = [d for d in visible if d.startswith("CPU")]
    if len(gpus) >= 2:
        made = backend.make_strategy("mirrored", gpus)
        return StrategyChoice(
            strategy=made,
            kind="mirrored",
            devices=tuple(gpus),
            reason=f"{len(gpus)} GPUs visible ({', '.join(gpus)}): MirroredStrategy trains on "
            "all of them, splitting every batch",
            num_replicas=int(made.num_replicas_in_sync),
        )
    if len(gpus) == 1:
        reason = f"one GPU visible ({gpus[0]}): the default strategy already places work on it"
        chosen = (gpus[0],)
    else:
        reason = (
            "no GPU visible: the default strategy runs on the CPU, which uses all its cores "
            "by itself"
        )
        if len(cpus) > 1:
            reason += (
                f"; the {len(cpus)} logical CPUs share the same cores, so mirroring over them adds "
                "no compute (ask for them with devices=... to test distributed code)"
            )
        chosen = ("CPU:0",)
    return StrategyChoice(
        strategy=backend.make_strategy("default"), kind="default", devices=chosen, reason=reason
    )
