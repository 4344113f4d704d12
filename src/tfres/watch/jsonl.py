"""Follow a JSON-lines file that another process appends to (``tfres run``'s steps and
events files, written by the child's start-up hook).

    tail = JsonLinesTail(path)
    for line in tail.new_lines():   # the complete lines appended since the last call
        event = json.loads(line)

The file is opened on the first call that finds it and kept open; each call reads only what
was appended. A line still being written (no newline yet) waits for the next call, so a
reader never sees half a line. Opening errors reach the caller, which decides whether a
missing file means "not yet" or "give up".
"""

from __future__ import annotations

import os
from typing import BinaryIO

__all__ = ["JsonLinesTail"]


class JsonLinesTail:
    """The complete lines appended to ``path`` since the previous :meth:`new_lines`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._fh: BinaryIO | None = None
        self._partial = b""

    def new_lines(self) -> list[bytes]:
        """The new complete lines (raises ``OSError`` where the file cannot be opened)."""
        if self._fh is None:
            self._fh = open(self.path, "rb")  # noqa: SIM115 - kept open: read on as it grows
        chunk = self._partial + self._fh.read()
        end = chunk.rfind(b"\n") + 1
        self._partial = chunk[end:]
        return chunk[:end].splitlines()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
