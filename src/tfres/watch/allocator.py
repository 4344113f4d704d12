"""TensorFlow allocator readings of a ``tfres run`` command, as its samples' ``tf_memory``.

TensorFlow answers ``get_memory_info`` only inside the process that runs it, so the parent
cannot read the command's allocator. The child's start-up hook does
(``tfres/devices/inject/_tfres_allocator.py``): once a second, from the moment the program
has started TensorFlow's runtime, it writes each changed reading to ``$TFRES_EVENTS_FILE``::

    {"event": "allocator", "pid": 4242, "t_monotonic": 1234.5,
     "devices": {"GPU:0": {"current_bytes": 7340032, "peak_bytes": 9437184}}}

:class:`AllocatorFollower` reads the new lines of that file on every sample (its ``read``
is the sampler's ``tf_reader``) and answers the latest reading, so each sample carries the
allocator as it stood at most a second before it, and the last sample (taken after the
command ended) its final peak: the same ``Sample.tf_memory`` an in-process
``tfres.monitor`` run records, read by the same rules, charts and exporters.

Only one process's allocator is followed: the first that reports (the program itself,
also when a shell or launcher starts it). Readings from other Python processes of the tree
that run TensorFlow too are left out, and a note says so.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from typing import Any

from tfres.watch.jsonl import JsonLinesTail

__all__ = ["AllocatorFollower", "NO_INSTRUMENT_NOTE"]

log = logging.getLogger("tfres")

#: what a record says when ``--no-instrument`` left the hook (and its readings) out
NO_INSTRUMENT_NOTE = (
    "TensorFlow allocator readings are not available: --no-instrument leaves out tfres's "
    "start-up hook, the only reader of the command's allocator (tfres cannot read another "
    "process's); the GPU rules judge from NVML alone"
)


class AllocatorFollower:
    """Follows the allocator events of the events file at ``path``.

    ``read()`` answers ``{device: {"current_bytes", "peak_bytes"}}`` as last written, or
    None before the first reading; ``note(text)`` is told once about processes left out.
    Reads only what was appended since the last call (a line still being written waits
    for the next call); a damaged line is skipped.
    """

    def __init__(self, path: str | os.PathLike[str], *, note: Callable[[str], None]) -> None:
        self.path = os.fspath(path)
        self._note = note
        self._tail = JsonLinesTail(path)
        self._latest: dict[str, dict[str, int]] | None = None
        #: the process whose allocator is followed (the first to report)
        self.pid: int | None = None
        self._others: set[int] = set()
        #: allocator lines taken in (for tests and the record's notes)
        self.readings = 0

    def read(self) -> dict[str, dict[str, int]] | None:
        """The latest allocator reading, after taking in what the child appended."""
        for line in self._new_lines():
            self._take(line)
        if self._latest is None:
            return None
        return {dev: dict(m) for dev, m in self._latest.items()}

    def _new_lines(self) -> list[bytes]:
        try:
            return self._tail.new_lines()
        except OSError:  # not written yet
            return []

    def _take(self, line: bytes) -> None:
        if b'"allocator"' not in line:  # phases and notes: read_events_file's
            return
        try:
            raw = json.loads(line)
        except ValueError:  # a damaged line (or not UTF-8)
            return
        if not isinstance(raw, dict) or raw.get("event") != "allocator":
            return
        devices = _devices(raw.get("devices"))
        pid = raw.get("pid")
        if devices is None or not isinstance(pid, int):
            return
        if self.pid is None:
            self.pid = pid
        if pid != self.pid:
            if pid not in self._others:
                self._others.add(pid)
                self._note(
                    f"TensorFlow allocator of process {pid} left out: the record follows "
                    f"the allocator of process {self.pid}, the first to report"
                )
            return
        self._latest = devices
        self.readings += 1

    def close(self) -> None:
        self._tail.close()


def _devices(value: Any) -> dict[str, dict[str, int]] | None:
    """The devices of one event, checked: names to two whole byte counts each."""
    if not isinstance(value, dict):
        return None
    out: dict[str, dict[str, int]] = {}
    for name, figures in value.items():
        if not isinstance(figures, dict):
            return None
        current, peak = _count(figures.get("current_bytes")), _count(figures.get("peak_bytes"))
        if current is None or peak is None:
            return None
        out[str(name)] = {"current_bytes": current, "peak_bytes": peak}
    return out


def _count(value: Any) -> int | None:
    """``value`` if it is a whole number of bytes (not a bool, not negative), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None
