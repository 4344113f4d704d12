"""The bytes a ``tfres run`` child has written (``_tfres_instrument.written_bytes``): what a
batch-end callback's saves are told apart by. Read from ``/proc/self/io``; None, never a
guess, where the kernel does not say."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tfres.devices.child_env import INJECT_DIR

sys.path.insert(0, str(INJECT_DIR))
import _tfres_instrument as core  # noqa: E402

sys.path.remove(str(INJECT_DIR))

linux_io = pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="reads /proc/self/io")


@linux_io
def test_a_write_is_counted(tmp_path: Path) -> None:
    written = core._WrittenBytes()
    before = written()
    assert isinstance(before, int)
    (tmp_path / "w.bin").write_bytes(b"x" * 3_000_000)
    after = written()
    assert after is not None and after - before >= 3_000_000


@linux_io
def test_a_forked_child_reads_its_own_counter(tmp_path: Path) -> None:
    written = core._WrittenBytes()
    parent = written()
    assert parent is not None
    (tmp_path / "parent.bin").write_bytes(b"x" * 2_000_000)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a fresh counter, small, not the parent's
        os.close(read)
        os.write(write, str(written()).encode())
        os._exit(0)
    os.close(write)
    child = int(os.read(read, 64).decode())
    os.waitpid(pid, 0)
    assert child < 2_000_000 <= written() - parent  # type: ignore[operator]


def test_where_the_kernel_does_not_say_it_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object, **kwargs: object) -> int:
        raise PermissionError("no task I/O accounting")

    monkeypatch.setattr(core.os, "open", refused)
    written = core._WrittenBytes()
    assert written() is None and written() is None
