"""JsonLinesTail: only complete appended lines, each once; opening errors reach the caller."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfres.watch.jsonl import JsonLinesTail


def test_complete_lines_once_and_a_half_written_line_waits(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": ')
    tail = JsonLinesTail(path)
    assert tail.new_lines() == [b'{"a": 1}']
    assert tail.new_lines() == []
    with open(path, "ab") as fh:
        fh.write(b'2}\n{"c": 3}\n')
    assert tail.new_lines() == [b'{"b": 2}', b'{"c": 3}']
    tail.close()


def test_a_missing_file_raises_to_the_caller(tmp_path: Path) -> None:
    tail = JsonLinesTail(tmp_path / "not-yet.jsonl")
    with pytest.raises(FileNotFoundError):
        tail.new_lines()
    (tmp_path / "not-yet.jsonl").write_bytes(b"{}\n")
    assert tail.new_lines() == [b"{}"]
