"""``tfres runs`` and ``tfres show``: listing the store and printing one record, and one
clear line (never a traceback) for every file that is not a usable record."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tfres.cli import main
from tfres.record import Record, save
from tfres.store import Store

TFRES = shutil.which("tfres", path=str(Path(sys.executable).parent)) or "tfres"


def _stored(**kw) -> Record:
    r = Record(**kw)
    r.fingerprint = {"host": {"hostname": "box-7"}}
    with Store() as store:
        store.save(r)
    return r


def test_runs_empty(capsys):
    assert main(["runs"]) == 0
    assert "no runs yet" in capsys.readouterr().out


def test_runs_lists_and_json(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")  # a usual terminal (not a pipe's 80 columns)
    _stored(label="first", command=["python", "train.py"], status="ok", elapsed_seconds=61.0)
    _stored(label="second", kind="bench", workloads=[{"name": "tf_matmul"}])
    assert main(["runs"]) == 0
    out = capsys.readouterr().out
    assert "first" in out and "second" in out and "box-7" in out and "python train.py" in out
    assert out.index("second") < out.index("first")  # newest first
    assert max(len(line) for line in out.splitlines()) <= 100
    assert main(["runs", "--json", "--limit", "1"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["label"] for r in rows] == ["second"]
    assert rows[0]["what"] == "bench: tf_matmul"


def test_show_by_number_id_and_file(capsys, tmp_path):
    r = _stored(label="shown", command=["python", "x.py"], status="ok", exit_code=0)
    assert main(["show", "1"]) == 0
    out = capsys.readouterr().out
    assert "shown" in out and "python x.py" in out and "box-7" in out
    assert main(["show", r.id[:12], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["label"] == "shown"
    path = save(r, tmp_path / "r.json")
    assert main(["show", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == r.id


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "is truncated"),
        (b'{"foo": 1}', "not a tfres record"),
        (b"not json at all", "not valid JSON"),
        (b'{"format": "tfres.record", "version": 7}', "newer tfres"),
    ],
)
def test_show_bad_file_prints_one_line(capsys, tmp_path, content, words):
    path = tmp_path / "bad.json"
    if content is None:
        full = save(Record(label="x", command=["a"] * 50), tmp_path / "full.json").read_bytes()
        content = full[: len(full) // 2]
    path.write_bytes(content)
    assert main(["show", str(path)]) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("tfres: error: record ") and words in lines[0]
    assert str(path) in lines[0]
    assert captured.out == ""


def test_show_missing_run(capsys):
    Store().close()  # an empty store: a read-only command never makes one
    assert main(["show", "nope"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"tfres: error: no run 'nope' in store {os.environ['TFRES_STORE']}; " + (
        "list them with `tfres runs`"
    )


def test_show_truncated_and_foreign_via_console_script(tmp_path):
    """The acceptance check, through the installed ``tfres`` script."""
    full = save(Record(label="x", command=["a"] * 50), tmp_path / "full.json").read_bytes()
    truncated = tmp_path / "truncated.json"
    truncated.write_bytes(full[:-30])
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"foo": 1}')
    for path, words in ((truncated, "is truncated"), (foreign, "not a tfres record")):
        proc = subprocess.run([TFRES, "show", str(path)], capture_output=True, text=True)
        assert proc.returncode != 0
        assert proc.stdout == ""
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0] and "Traceback" not in proc.stderr


def test_runs_prints_labels_verbatim_not_as_markup(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    _stored(label="[/bold] odd [red]", command=["echo", "[x]"])
    assert main(["runs"]) == 0
    out = capsys.readouterr().out
    assert "[/bold] odd [red]" in out
