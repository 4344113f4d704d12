"""``tfres.find_batch_size()``: the largest batch size that fits a memory budget, measured.

    result = tfres.find_batch_size("train.py:build_model", (x, y), budget="8GiB")
    result.largest_batch_size          # fits with the safety margin
    result.best_throughput_batch_size  # the most samples/s among the trials that fit

Each trial trains a few real steps at one batch size, in a process of its own
(``python -m tfres._trial``), so one trial's memory never leaks into the next and a trial that
runs out of memory takes nothing down with it. A watchdog ends a trial that goes past the
budget. A batch size "fits" when its peak memory stays within ``margin`` (90%) of the
budget: the process's peak RSS on the CPU, the TensorFlow allocator's peak on a GPU (where
the trial also runs with the budget as TensorFlow's memory limit, so it fails with
``ResourceExhaustedError`` instead of taking more).

At most 8 trials: grow, aim with a line through the peaks measured, bisect (see
:mod:`tfres.batchsize.search`).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tfres.backends import nvml
from tfres.backends.memory import available_memory_bytes
from tfres.batchsize.search import MAX_TRIALS, Trial, classify, search
from tfres.batchsize.trial import _take
from tfres.budget.watchdog import MemoryBudget, parse_budget
from tfres.units import format_bytes
from tfres.user_code import check_reference, load_callable

__all__ = [
    "Trial",
    "BatchSizeResult",
    "find_batch_size",
    "measure_trial",
    "search",
    "classify",
    "isolated_reference",
    "MAX_TRIALS",
]

log = logging.getLogger("tfres")


@dataclass(frozen=True)
class BatchSizeResult:
    """What :func:`find_batch_size` found; ``largest_batch_size`` is None when not even
    ``min_batch_size`` fits (``stopped_because`` says so)."""

    largest_batch_size: int | None
    best_throughput_batch_size: int | None
    budget_bytes: int
    margin: float
    device: str
    max_batch_size: int
    stopped_because: str
    trials: tuple[Trial, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["trials"] = [t.to_dict() for t in self.trials]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BatchSizeResult:
        kwargs = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        kwargs["trials"] = tuple(Trial.from_dict(t) for t in d.get("trials") or ())
        return cls(**kwargs)


def isolated_reference(ref: Any, what: str) -> str:
    """``ref`` if a trial process can load it: ``"module:function"`` or
    ``"script.py:function"`` that :func:`tfres.user_code.check_reference` accepts and whose
    script defines the name at top level (or whose module exists). Nothing is imported from
    a script; a module's parent packages are (to find it)."""
    if not isinstance(ref, str) or ":" not in ref:
        raise ValueError(
            f"{what} must be 'script.py:function' or 'module:function' to run in a separate "
            f"process (got {ref!r}); pass isolate=False to use a Python object"
        )
    target, _, name = ref.rpartition(":")
    if target.endswith(".py") and not Path(target).is_file():
        raise ValueError(f"{what}: no such file {target!r}")
    check_reference(ref)
    if target.endswith(".py"):
        path = Path(target)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        defined |= {
            t.id
            for n in tree.body
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        if name not in defined:
            raise ValueError(f"{what}: {target} defines no {name!r} at top level")
    elif importlib.util.find_spec(target) is None:
        raise ValueError(f"{what}: no module named {target!r} (got {ref!r})")
    return ref


# -- trials --------------------------------------------------------------------------------
def _isolated_runner(
    spec: dict[str, Any], *, watch_bytes: int, workdir: Path, timeout: float
) -> Callable[[int], Trial]:
    """Trials as ``python -m tfres._trial``, each guarded by a watchdog at ``watch_bytes``."""

    def run(batch_size: int) -> Trial:
        spec_path = workdir / f"trial-{batch_size}.json"
        out_path = workdir / f"trial-{batch_size}.out.json"
        spec_path.write_text(json.dumps({**spec, "batch_size": batch_size}))
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2")}
        with open(workdir / f"trial-{batch_size}.log", "w+b") as errors:
            proc = subprocess.Popen(
                [sys.executable, "-m", "tfres.batchsize.trial", str(spec_path), str(out_path)],
                stdout=errors,
                stderr=errors,
                env=env,
            )
            guard = MemoryBudget(
                watch_bytes, pid=proc.pid, interval=0.02, grace_seconds=2.0, warn=False
            )
            guard.start()
            try:
                proc.wait(timeout=timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                timed_out = True
            finally:
                guard.stop()
            errors.seek(0)
            tail = errors.read()[-2000:].decode("utf-8", "replace").strip().splitlines()
        if guard.over:
            return Trial(batch_size, "over-budget", peak_bytes=guard.peak_bytes, error=guard.reason)
        if timed_out:
            return Trial(batch_size, "timeout", error=f"no result within {timeout:g} s")
        if out_path.exists():
            d = json.loads(out_path.read_text())
            return Trial(
                batch_size,
                d["status"],
                peak_bytes=d.get("peak_bytes"),
                samples_per_second=d.get("samples_per_second"),
                seconds=d.get("seconds"),
                error=d.get("error"),
                tf_peak_bytes=d.get("tf_peak_bytes"),
            )
        if proc.returncode < 0:
            return Trial(batch_size, "oom", error=f"killed by signal {-proc.returncode}")
        return Trial(batch_size, "error", error=(tail[-1] if tail else f"exit {proc.returncode}"))

    return run


def _in_process_runner(model_fn: Any, data: Any, steps: int) -> Callable[[int], Trial]:
    """Trials in this process: quick, but memory left by one trial counts in the next."""
    import time

    import numpy as np

    build = load_callable(model_fn) if isinstance(model_fn, str) else model_fn
    made = load_callable(data)() if isinstance(data, str) else data
    x, y = made

    def run(batch_size: int) -> Trial:
        import keras

        keras.backend.clear_session()
        xb, yb = _take(x, batch_size, np), _take(y, batch_size, np)
        with MemoryBudget(1 << 62, interval=0.01, hard=False) as watch:
            try:
                model = build()
                model.train_on_batch(xb, yb)
                t0 = time.perf_counter()
                for _ in range(steps):
                    model.train_on_batch(xb, yb)
                elapsed = time.perf_counter() - t0
            except MemoryError as err:
                return Trial(batch_size, "oom", error=f"MemoryError: {err}")
            except Exception as err:
                status = "oom" if type(err).__name__ == "ResourceExhaustedError" else "error"
                return Trial(batch_size, status, error=f"{type(err).__name__}: {err}"[:300])
            watch.sample_once()
        rate = batch_size * steps / elapsed if elapsed > 0 else None
        return Trial(
            batch_size, "ok", peak_bytes=watch.peak_bytes, samples_per_second=rate, seconds=elapsed
        )

    return run


def _device(device: str) -> str:
    if device not in ("auto", "cpu", "gpu"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'gpu' (got {device!r})")
    if device != "auto":
        return device

    try:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        return "gpu" if nvml.device_count() > 0 and visible not in ("", "-1") else "cpu"
    except nvml.NvmlUnavailable:
        return "cpu"


def _budget_bytes(budget: Any, device: str) -> int:
    if device == "gpu":
        from tfres.backends import nvml
        from tfres.backends.cuda_order import tf_gpu_indices
        from tfres.units import parse_size_or_percent

        # the trial trains on TensorFlow's GPU:0, the first CUDA-visible GPU: not NVML's GPU 0
        gpus = {g["index"]: g for g in nvml.gpu_inventory()[0]}
        total = int(gpus[tf_gpu_indices()[0]]["memory_total_bytes"])
        if budget is None:
            return total
        n = parse_size_or_percent(budget, total_bytes=total)
        if not 0 < n <= total:
            raise ValueError(
                f"GPU memory budget {budget!r} must be above 0 and at most {format_bytes(total)}"
            )
        return n

    if budget is None:
        return available_memory_bytes()
    return parse_budget(budget)


def find_batch_size(
    model_fn: str | Callable[[], Any],
    data: str | tuple[Any, Any],
    *,
    budget: str | int | None = None,
    max_batch_size: int = 4096,
    min_batch_size: int = 1,
    start_batch_size: int = 32,
    steps_per_trial: int = 5,
    margin: float = 0.9,
    max_trials: int = MAX_TRIALS,
    isolate: bool = True,
    device: str = "auto",
    trial_timeout_seconds: float = 600.0,
    on_trial_start: Callable[[int, int], None] | None = None,
    on_trial_end: Callable[[Trial], None] | None = None,
) -> BatchSizeResult:
    """The largest batch size whose training steps fit ``margin`` of the memory ``budget``.

    ``model_fn`` returns a compiled Keras model; ``data`` is ``(x, y)`` arrays (written to
    temporary .npy files for the trial processes) or a reference to a function returning
    them. With ``isolate=True`` (the default) both must be references, ``"train.py:build_model"``
    or ``"package.module:build_model"``; a callable needs ``isolate=False``, where trials share
    this process and its memory. ``budget`` is ``"10%"``, ``"2GiB"`` or bytes of host memory,
    or of GPU memory when the trials run on a GPU (``device="auto"`` picks the GPU when NVML
    sees one); None means the memory available now. At most ``max_trials`` (<= 8) trials.

        result = tfres.find_batch_size("train.py:build_model", "train.py:make_data", budget="8GiB")
        model.fit(x, y, batch_size=result.largest_batch_size)
    """
    _check_limits(
        max_batch_size=max_batch_size,
        min_batch_size=min_batch_size,
        start_batch_size=start_batch_size,
        steps_per_trial=steps_per_trial,
        margin=margin,
        max_trials=max_trials,
    )
    where = _device(device)
    budget_bytes = _budget_bytes(budget, where)
    limit_bytes = budget_bytes * margin
    kwargs: dict[str, Any] = dict(
        limit_bytes=limit_bytes,
        min_batch_size=min_batch_size,
        max_batch_size=max_batch_size,
        start=start_batch_size,
        max_trials=max_trials,
    )
    if not isolate:
        run = _in_process_runner(model_fn, data, steps_per_trial)
        trials, why = search(_tracked(run, limit_bytes, on_trial_start, on_trial_end), **kwargs)
    else:
        with _isolated(
            model_fn, data, where, budget_bytes, steps_per_trial, trial_timeout_seconds
        ) as run:
            trials, why = search(_tracked(run, limit_bytes, on_trial_start, on_trial_end), **kwargs)
    largest, best = _largest_and_best(trials)
    return BatchSizeResult(
        largest, best, budget_bytes, margin, where, max_batch_size, why, tuple(trials)
    )


def _check_limits(
    *,
    max_batch_size: int,
    min_batch_size: int,
    start_batch_size: int,
    steps_per_trial: int,
    margin: float,
    max_trials: int,
) -> None:
    """A ``ValueError`` naming the first of :func:`find_batch_size`'s limits that is wrong."""
    for name, value in (
        ("max_batch_size", max_batch_size),
        ("min_batch_size", min_batch_size),
        ("start_batch_size", start_batch_size),
        ("steps_per_trial", steps_per_trial),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1 (got {value!r})")
    if min_batch_size > max_batch_size:
        raise ValueError(
            f"min_batch_size {min_batch_size} is above max_batch_size {max_batch_size}"
        )
    if not 0 < margin <= 1:
        raise ValueError(f"margin must be above 0 and at most 1 (got {margin!r})")
    if not 1 <= max_trials <= MAX_TRIALS:
        raise ValueError(f"max_trials must be between 1 and {MAX_TRIALS} (got {max_trials!r})")


def _tracked(
    run: Callable[[int], Trial],
    limit_bytes: float,
    on_trial_start: Callable[[int, int], None] | None,
    on_trial_end: Callable[[Trial], None] | None,
) -> Callable[[int], Trial]:
    """``run`` with each trial numbered, classified against ``limit_bytes`` and reported."""
    count = 0

    def go(batch_size: int) -> Trial:
        nonlocal count
        count += 1
        if on_trial_start is not None:
            on_trial_start(count, batch_size)
        trial = classify(run(batch_size), limit_bytes)
        if on_trial_end is not None:
            on_trial_end(trial)
        return trial

    return go


def _largest_and_best(trials: list[Trial]) -> tuple[int | None, int | None]:
    """The largest fitting batch size, and the fitting one with the most samples/s."""
    fitting = [t for t in trials if t.fits]
    largest = max((t.batch_size for t in fitting), default=None)
    rated = [t for t in fitting if t.samples_per_second]
    best = (
        max(rated, key=lambda t: (t.samples_per_second, t.batch_size)).batch_size if rated else None
    )
    return largest, best


def measure_trial(
    model_fn: str,
    data: str | tuple[Any, Any],
    batch_size: int,
    *,
    budget: str | int | None = None,
    steps_per_trial: int = 5,
    device: str = "auto",
    trial_timeout_seconds: float = 600.0,
) -> Trial:
    """One isolated trial at ``batch_size`` (what :func:`find_batch_size` runs each time).

    The status is the trial's own (``"ok"`` when it ran); compare ``peak_bytes`` with your
    margin, or use :func:`tfres.batchsize.search.classify`.

        trial = measure_trial("train.py:build_model", "train.py:make_data", 512, budget="8GiB")
    """
    where = _device(device)
    budget_bytes = _budget_bytes(budget, where)
    with _isolated(
        model_fn, data, where, budget_bytes, steps_per_trial, trial_timeout_seconds
    ) as run:
        return run(batch_size)


@contextmanager
def _isolated(
    model_fn: Any, data: Any, where: str, budget_bytes: int, steps: int, timeout: float
) -> Iterator[Callable[[int], Trial]]:
    """A runner of isolated trials, with the data written to a temporary folder."""
    spec: dict[str, Any] = {
        "model_ref": _absolute(isolated_reference(model_fn, "model_fn")),
        "steps": steps,
        "device": where,
        "budget_bytes": budget_bytes,
    }
    if isinstance(data, str):
        spec["data_ref"] = _absolute(isolated_reference(data, "data"))
    with tempfile.TemporaryDirectory(prefix="tfres-batchsize-") as tmp:
        workdir = Path(tmp)
        if not isinstance(data, str):
            spec.update(_save_arrays(data, workdir))
        # on a GPU the trial's own memory limit holds the budget; the host only needs guarding
        watch = budget_bytes if where == "cpu" else available_memory_bytes()
        yield _isolated_runner(spec, watch_bytes=watch, workdir=workdir, timeout=timeout)


def _absolute(ref: str) -> str:
    target, _, name = ref.rpartition(":")
    return f"{Path(target).resolve()}:{name}" if target.endswith(".py") else ref


def _save_arrays(data: Any, workdir: Path) -> dict[str, str]:
    import numpy as np

    if not (isinstance(data, (tuple, list)) and len(data) == 2):
        raise ValueError(
            f"data must be (x, y) arrays or 'script.py:make_data' (got {type(data).__name__})"
        )
    paths = {}
    for key, value in zip(("x_path", "y_path"), data, strict=True):
        path = workdir / f"{key[0]}.npy"
        np.save(path, np.asarray(value), allow_pickle=False)
        paths[key] = str(path)
    return paths
