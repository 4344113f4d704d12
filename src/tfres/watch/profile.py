"""A TensorFlow profiler window in tfres's words: the step breakdown input / compute / other.

``tfres run --profile A:B`` (and, by default, one short window per run) has the command's
start-up hook trace train steps A-B with TensorBoard's step markers; the hook reads the trace
(:mod:`tfres.devices.inject._tfres_xplane`) and the record keeps the result in
``record.extra["profile"]``. :func:`read_profile` reads a profile folder here (TensorFlow
needed, for ``xplane_pb2``); :func:`breakdown_line` says what the window shows, without
TensorBoard.

    profile = read_profile("tfres-profile")
    print(breakdown_line(profile))  # train steps 10-20 (11 steps, 412 ms): input 62%, ...
"""

from __future__ import annotations

import os
from typing import Any

from tfres.devices.inject import _tfres_xplane as xplane
from tfres.errors import MissingDependencyError, RecordError
from tfres.units import format_seconds

__all__ = ["read_profile", "breakdown_line"]


def read_profile(logdir: str | os.PathLike[str]) -> dict[str, Any]:
    """``{"steps": [...], "summary": {...}}`` of the newest trace under ``logdir``.

    Raises :class:`~tfres.errors.RecordError` when ``logdir`` holds no ``*.xplane.pb`` and
    :class:`~tfres.errors.MissingDependencyError` without TensorFlow.
    """

    path = xplane.latest_xplane(str(logdir))
    if path is None:
        raise RecordError(
            f"no profiler trace under {logdir} (plugins/profile/*/*.xplane.pb); "
            "write one with tfres run --profile 10:20"
        )
    try:
        steps = xplane.step_breakdown(path)
    except ImportError as err:
        raise MissingDependencyError(
            "tensorflow", "reading a profiler trace (xplane_pb2 ships in its wheel)", "cpu"
        ) from err
    return {"steps": steps, "summary": xplane.summary(steps), "path": path}


def breakdown_line(profile: dict[str, Any] | None) -> str | None:
    """One line on a profile window: its steps and the share of input, compute and other
    (and of the profiler's own cost, where the hook could tell it)."""
    if not profile:
        return None
    summary = profile.get("summary") or {}
    total = summary.get("duration_seconds")
    if not summary.get("steps") or not total:
        return None
    shares = ", ".join(
        f"{name} {100 * float(summary.get(key) or 0.0) / total:.0f}%"
        for name, key in (
            ("input", "input_seconds"),
            ("compute", "compute_seconds"),
            ("other", "other_seconds"),
            ("profiler", "profiler_seconds"),
        )
        if key != "profiler_seconds" or summary.get(key)
    )
    steps = [s.get("step") for s in profile.get("steps") or [] if s.get("step") is not None]
    which = f"train steps {min(steps)}-{max(steps)}" if steps else "the profiled steps"
    line = f"{which} ({summary['steps']} steps, {format_seconds(total)}): {shares}"
    if summary.get("contention_seconds"):
        line += (
            f" (input includes {100 * float(summary['contention_seconds']) / total:.0f}% of "
            "the pipeline slowing the step, against the step alone on a cached batch)"
        )
    if profile.get("dir"):
        line += f"; TensorBoard profile in {profile['dir']}"
    return line
