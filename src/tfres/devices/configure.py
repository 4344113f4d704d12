"""``tfres.configure()``: TensorFlow's device settings in one safe call.

    import tfres
    tfres.configure(gpu_memory_growth=True, intra_op_threads=4)   # first thing, before any model
    model = build_model()

TensorFlow lets these settings change only before its runtime starts (building a Keras model
or creating any tensor starts it) and then raises a cryptic ``RuntimeError``. ``configure``
checks every setting first, applies them together, and says what it did; too late, it raises
:class:`~tfres.errors.TooLateError` naming the setting, what started the runtime and the fix.
Asking for the value already in place is never an error.

:func:`tfres.devices.child_env.child_environment` gives the same settings to another
program (``tfres run``), through environment variables where TensorFlow reads one and
otherwise through an injected ``sitecustomize``, so it works for a script that never imports
tfres. Both check the settings with :mod:`tfres.devices.settings`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tfres.backends import tf_config
from tfres.devices import settings
from tfres.errors import NoGpuError, TooLateError

__all__ = ["Applied", "configure"]

log = logging.getLogger("tfres")

NO_GPU = "no GPU visible to TensorFlow"
_GROWTH_ENV = "TF_FORCE_GPU_ALLOW_GROWTH"
_MIB = settings.MIB


@dataclass(frozen=True)
class Applied:
    """What :func:`configure` did, setting by setting.

    ``applied``: set now; ``unchanged``: already so (asked for the current value);
    ``skipped``: setting -> why not (e.g. GPU settings on a machine with no GPU). Per-GPU
    values are keyed ``"GPU:0"``, ``"GPU:1"``, ...
    """

    applied: dict[str, Any] = field(default_factory=dict)
    unchanged: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    runtime_started: bool = False

    def lines(self) -> list[str]:
        """One line per setting, for people: ``"intra_op_threads = 4 (applied)"``."""
        out = [f"{k} = {v!r} (applied)" for k, v in self.applied.items()]
        out += [f"{k} = {v!r} (already so)" for k, v in self.unchanged.items()]
        out += [f"{k}: skipped: {why}" for k, why in self.skipped.items()]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "applied": dict(self.applied),
            "unchanged": dict(self.unchanged),
            "skipped": dict(self.skipped),
            "runtime_started": self.runtime_started,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Applied:
        return cls(
            applied=dict(d.get("applied") or {}),
            unchanged=dict(d.get("unchanged") or {}),
            skipped=dict(d.get("skipped") or {}),
            runtime_started=bool(d.get("runtime_started", False)),
        )


# -- configure ---------------------------------------------------------------------------
def configure(
    *,
    gpu_memory_growth: bool | Sequence[int] | None = None,
    gpu_memory_limit_bytes: int | str | Mapping[int | str, int | str] | None = None,
    visible_gpus: Sequence[int] | None = None,
    intra_op_threads: int | None = None,
    inter_op_threads: int | None = None,
    logical_cpus: int | None = None,
    logical_gpus: int | None = None,
    log_device_placement: bool | None = None,
) -> Applied:
    """Apply TensorFlow device settings; call it first thing, before any model or tensor.

    ``None`` leaves a setting alone. GPU indices are positions in
    ``tf.config.list_physical_devices("GPU")`` (what ``CUDA_VISIBLE_DEVICES`` leaves).

    - ``gpu_memory_growth``: True for every GPU, or the indices to grow; False turns it off.
    - ``gpu_memory_limit_bytes``: ``"4GiB"`` for every GPU or ``{0: "4GiB", 1: "6GiB"}``;
      TensorFlow then hands out at most that much (rounded down to MiB). With
      ``gpu_memory_growth=True`` too, memory grows up to the limit (set through
      ``TF_FORCE_GPU_ALLOW_GROWTH``: TensorFlow refuses ``set_memory_growth`` on a GPU with a
      limit); growth on a list of GPUs cannot share a GPU with a limit. There is no CPU
      memory limit in TensorFlow: use :func:`tfres.limit_memory`.
    - ``visible_gpus``: the only GPUs TensorFlow may use; ``[]`` hides them all.
    - ``intra_op_threads``/``inter_op_threads``: thread pool sizes, 0 lets TensorFlow choose.
    - ``logical_cpus``: split the CPU into this many devices (``CPU:0`` ... for strategies).
    - ``logical_gpus``: split the first GPU into this many (each of ``gpu_memory_limit_bytes``).
    - ``log_device_placement``: log the device of every op.

    With no GPU visible to TensorFlow, GPU settings are skipped with a warning (the result's
    ``skipped`` says so); ``visible_gpus`` naming a GPU that does not exist raises
    :class:`~tfres.errors.NoGpuError`. Bad values raise ``ValueError`` showing the value.

        applied = tfres.configure(gpu_memory_growth=True, intra_op_threads=4)
        print(applied.lines())
    """
    wanted = _checked(
        gpu_memory_growth=gpu_memory_growth,
        gpu_memory_limit_bytes=gpu_memory_limit_bytes,
        visible_gpus=visible_gpus,
        intra_op_threads=intra_op_threads,
        inter_op_threads=inter_op_threads,
        logical_cpus=logical_cpus,
        logical_gpus=logical_gpus,
        log_device_placement=log_device_placement,
    )
    if not wanted:
        return Applied()
    tf_config.tensorflow()
    started = tf_config.runtime_started()
    n_gpus = tf_config.gpu_count()
    _check_visible(wanted.get("visible_gpus"), n_gpus)
    skipped: dict[str, str] = {}
    want = _per_gpu(wanted, n_gpus, skipped)
    applied, unchanged = _changes(want, started)
    _apply_in_time(applied)
    result = Applied(
        applied={k: _public(k, v) for k, v in applied.items()},
        unchanged=unchanged,
        skipped=skipped,
        runtime_started=started,
    )
    for line in result.lines():
        log.info("tfres.configure: %s", line)
    return result


def _checked(**raw: Any) -> dict[str, Any]:
    """The settings given (not None), each checked; a bad one raises ValueError showing it."""
    log_device_placement = raw["log_device_placement"]
    if log_device_placement is not None and not isinstance(log_device_placement, bool):
        raise ValueError(
            f"log_device_placement must be True or False (got {log_device_placement!r})"
        )
    wanted = {
        "gpu_memory_growth": settings.growth(raw["gpu_memory_growth"]),
        "gpu_memory_limit_bytes": settings.limits(raw["gpu_memory_limit_bytes"]),
        "visible_gpus": settings.indices("visible_gpus", raw["visible_gpus"]),
        "intra_op_threads": settings.count("intra_op_threads", raw["intra_op_threads"], minimum=0),
        "inter_op_threads": settings.count("inter_op_threads", raw["inter_op_threads"], minimum=0),
        "logical_cpus": settings.count("logical_cpus", raw["logical_cpus"], minimum=1),
        "logical_gpus": settings.count("logical_gpus", raw["logical_gpus"], minimum=1),
        "log_device_placement": log_device_placement,
    }
    return {k: v for k, v in wanted.items() if v is not None}


def _check_visible(visible: list[int] | None, n_gpus: int) -> None:
    """``visible_gpus`` naming a GPU TensorFlow does not see raises NoGpuError."""
    missing = [i for i in visible or [] if i >= n_gpus]
    if missing and n_gpus == 0:
        raise NoGpuError(
            f"visible_gpus={visible!r} but TensorFlow sees no GPU; run `tfres doctor` to "
            "see why, or leave visible_gpus out"
        )
    if missing:
        raise NoGpuError(
            f"visible_gpus={visible!r} names GPU {missing[0]} but TensorFlow sees "
            f"{n_gpus} GPU(s); pick indices below {n_gpus}"
        )


def _changes(want: dict[str, Any], started: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """(settings to apply, settings already so); a change after the runtime started raises
    TooLateError naming the setting and what started the runtime."""
    current = tf_config.current_settings()
    applied: dict[str, Any] = {}
    unchanged: dict[str, Any] = {}
    for name, value in want.items():
        now = _current_value(name, value, current)
        if now == value or (name == "visible_gpus" and sorted(now) == sorted(value)):
            unchanged[name] = _public(name, value)
        elif started and name != "log_device_placement":
            raise TooLateError(
                f"cannot set {name}={_public(name, value)!r} (now {_public(name, now)!r}"
                f"{', the default' if now == 0 else ''}): the "
                f"TensorFlow runtime already started ({tf_config.runtime_start_cause()}); call "
                "tfres.configure() first thing, before building any model or tensor, or "
                "restart the Python process"
            )
        else:
            applied[name] = value
    return applied, unchanged


def _apply_in_time(applied: dict[str, Any]) -> None:
    try:
        _apply(applied)
    except RuntimeError as err:  # the runtime started in another thread meanwhile
        raise TooLateError(
            f"TensorFlow refused the settings ({err}); call tfres.configure() first thing, "
            "before building any model or tensor, or restart the Python process"
        ) from err


def _per_gpu(wanted: dict[str, Any], n_gpus: int, skipped: dict[str, str]) -> dict[str, Any]:
    """GPU settings expanded to {index: value} and checked against the GPUs there are."""
    want = dict(wanted)
    gpu_names = [
        n for n in ("gpu_memory_growth", "gpu_memory_limit_bytes", "logical_gpus") if n in want
    ]
    if n_gpus == 0 and gpu_names:
        for name in gpu_names:
            del want[name]
            skipped[name] = NO_GPU
        log.warning("tfres.configure: %s skipped: %s", ", ".join(gpu_names), NO_GPU)
        return want
    if "gpu_memory_growth" in want:
        g = want["gpu_memory_growth"]
        want["gpu_memory_growth"] = (
            {i: g for i in range(n_gpus)} if isinstance(g, bool) else dict.fromkeys(g, True)
        )
    if "gpu_memory_limit_bytes" in want:
        lim = want["gpu_memory_limit_bytes"]
        per = dict.fromkeys(range(n_gpus), lim) if isinstance(lim, int) else lim
        # TensorFlow takes whole MiB: say what it will really get
        want["gpu_memory_limit_bytes"] = {i: v // _MIB * _MIB for i, v in per.items()}
    if "logical_gpus" in want:
        want["logical_gpus"] = {0: want["logical_gpus"]}
        limit = (want.get("gpu_memory_limit_bytes") or {}).get(0)
        if want["logical_gpus"][0] > 1 and limit is None:
            raise ValueError(
                f"logical_gpus={wanted['logical_gpus']} needs the memory of each logical GPU: "
                "add gpu_memory_limit_bytes={0: '2GiB'} (for example)"
            )
    for name in gpu_names:
        bad = [i for i in want[name] if i >= n_gpus]
        if bad:
            raise ValueError(
                f"{name} names GPU {bad[0]} but TensorFlow sees {n_gpus} GPU(s) "
                f"(got {wanted[name]!r})"
            )
    if wanted.get("gpu_memory_growth") is True and want.get("gpu_memory_limit_bytes"):
        # TensorFlow refuses set_memory_growth on a GPU with a memory limit, but its
        # allocator grows up to the limit when TF_FORCE_GPU_ALLOW_GROWTH is set
        del want["gpu_memory_growth"]
        want[_GROWTH_ENV] = "true"
    both = set((want.get("gpu_memory_growth") or {}).items()) & {
        (i, True) for i in want.get("gpu_memory_limit_bytes") or {}
    }
    if both:
        raise ValueError(
            f"GPU {min(both)[0]} has both memory growth and a memory limit; choose one"
        )
    return want


def _current_value(name: str, value: Any, current: dict[str, Any]) -> Any:
    if name == _GROWTH_ENV:
        return "true" if current.get("growth_by_environment") else None
    now = current[name]
    if isinstance(value, dict):
        return {i: now.get(i) for i in value}
    return now


def _apply(applied: dict[str, Any]) -> None:
    if "visible_gpus" in applied:
        tf_config.set_visible_gpus(applied["visible_gpus"])
    if "gpu_memory_growth" in applied:
        tf_config.set_memory_growth(applied["gpu_memory_growth"])
    if _GROWTH_ENV in applied:
        tf_config.set_growth_by_environment()
    if "gpu_memory_limit_bytes" in applied or "logical_gpus" in applied:
        tf_config.set_gpu_memory_limits(
            applied.get("gpu_memory_limit_bytes") or {}, logical_gpus=applied.get("logical_gpus")
        )
    if "logical_cpus" in applied:
        tf_config.set_logical_cpus(applied["logical_cpus"])
    tf_config.set_threads(
        intra_op=applied.get("intra_op_threads"), inter_op=applied.get("inter_op_threads")
    )
    if "log_device_placement" in applied:
        tf_config.set_log_device_placement(applied["log_device_placement"])


def _public(name: str, value: Any) -> Any:
    """Per-GPU dicts keyed "GPU:i" (JSON-friendly); everything else as is."""
    if isinstance(value, dict):
        return {f"GPU:{i}": v for i, v in sorted(value.items())}
    return value
