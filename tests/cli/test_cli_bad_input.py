"""Bad input to the CLI: one line naming the value, a non-zero exit, no traceback, and no
work done (or store made) before a bad output path is found (docs/reliability.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tfres.cli import main
from tfres.record import Record, save
from tfres.store import Store

# exit codes, one-line messages and stored bytes: no time or CPU share is asserted
pytestmark = pytest.mark.parallel


@pytest.fixture
def two_runs(store_path: Path) -> Path:
    with Store(store_path) as store:
        for label in ("a", "b"):
            store.save(Record(kind="run", label=label, status="ok", command=["true"]))
    return store_path


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.strip().splitlines() if "error: " in ln]  # after argparse's usage
    assert len(lines) == 1, err
    assert "internal error" not in err and "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["report", "1", "--html", "/proc/x.html"], "cannot write --html /proc/x.html"),
        (["compare", "1", "2", "--html", "/tmp"], "cannot write --html /tmp: it is a folder"),
        (["export", "1", "--out", "/proc/x.csv"], "cannot write --out /proc/x.csv"),
        (
            ["export", "1", "--tensorboard", "/etc/passwd"],
            "cannot write --tensorboard /etc/passwd: it is a file, not a folder",
        ),
        (["export", "1", "--out", "/dev/null"], "it is not a regular file"),
        (["report", "1", "--html", "/etc/passwd/x.html"], "/etc/passwd is not a folder"),
    ],
)
def test_unwritable_output_paths_are_one_line(two_runs, capsys, argv, words):
    assert main(argv) == 2
    line = _one_error_line(capsys)
    assert line.startswith("tfres: error: ") and words in line


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["report", "1", "--html", ""], "argument --html: expected a file name (got '')"),
        (["compare", "1", "2", "--html", " "], "argument --html: expected a file name"),
        (["export", "1", "--out", ""], "argument --out: expected a file name (got '')"),
        (["runs", "--limit", "99999999999999999999999"], "(got '99999999999999999999999')"),
        (["runs", "--limit", "0"], "expected a number from 1 to 1000000000 (got '0')"),
        (["runs", "--limit=-1"], "(got '-1')"),
        (["runs", "--limit", "ten"], "expected a whole number (got 'ten')"),
        (["run", "--cpu-threads", "99999999999999999999", "--", "true"], "99999999999999999999"),
        (["run", "--inter-op-threads", "5000", "--", "true"], "at most 4096 threads"),
    ],
)
def test_usage_errors_name_the_value(two_runs, capsys, argv, words):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert words in _one_error_line(capsys)


def test_worker_without_job_is_a_usage_error(capsys):
    assert main(["run", "--worker", "0", "--", "true"]) == 2
    assert "--worker 0 needs --job NAME" in _one_error_line(capsys)


def test_runs_of_an_unknown_job_says_so(two_runs, capsys):
    assert main(["runs", "--job", "nonexist"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no runs of job 'nonexist' in store ") and "no runs yet" not in out


def test_show_of_a_superscript_names_the_value(two_runs, capsys):
    assert main(["show", "²"]) == 1
    assert "no run '²' in store" in _one_error_line(capsys)


def test_show_refuses_devices_and_fifos(tmp_path, capsys):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo)):
        assert main(["show", path]) == 1
        assert f"record {path} is not a regular file" in _one_error_line(capsys)


def test_a_file_named_3_does_not_win_over_run_3(two_runs, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    save(Record(label="the file"), tmp_path / "2")
    assert main(["show", "2", "--json"]) == 0
    assert '"label": "b"' in capsys.readouterr().out
    assert main(["show", "./2", "--json"]) == 0
    assert '"label": "the file"' in capsys.readouterr().out


def test_read_only_commands_never_create_a_store(tmp_path, capsys):
    typo = tmp_path / "stroe.sqlite"
    for argv in (["runs"], ["show", "1"], ["export", "1"], ["report", "1"], ["compare", "1", "2"]):
        assert main([*argv, "--store", str(typo)]) == 1
        assert f"no store at {typo}" in _one_error_line(capsys)
    assert not typo.exists() and list(tmp_path.iterdir()) == []


def test_runs_with_no_store_yet_is_not_an_error(store_path, capsys):
    assert main(["runs"]) == 0
    assert "no runs yet" in capsys.readouterr().out
    assert not store_path.exists()


def test_non_utf8_bytes_in_the_command_and_label_reach_the_store(store_path):
    """``tfres run --label $'\\xff' -- python3 -c pass $'\\xff\\xfe.csv'``, bytes and all."""
    proc = subprocess.run(
        [sys.executable, "-m", "tfres", "run", "--label", b"l\xff", "--"]
        + [sys.executable, "-c", "pass", b"\xff\xfe.csv"],
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    with Store(store_path, readonly=True) as store:
        (run,) = store.runs()
        record = store.get(run.id)
    assert record.command[-1] == "\\xff\\xfe.csv" and record.label == "l\\xff"
    assert run.what is not None and run.what.endswith("\\xff\\xfe.csv")


def test_secrets_on_the_command_line_stay_out_of_every_output(store_path, tmp_path):
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-c", "pass", "--api-key=sk-12345", "--password", "hunter3"]
    cmd += ["postgres://u:pw@h/db"]
    proc = subprocess.run(
        [sys.executable, "-m", "tfres", "run", "--out", str(out), "--", *cmd],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    shown = [
        subprocess.run(
            [sys.executable, "-m", "tfres", *argv], capture_output=True, text=True, timeout=120
        ).stdout
        for argv in (["runs", "--json"], ["show", "1", "--json"], ["show", "1"])
    ]
    assert out.stat().st_mode & 0o777 == 0o600
    html = tmp_path / "r.html"
    assert main(["report", "1", "--html", str(html)]) == 0
    for text in (*shown, out.read_text(), html.read_text()):
        assert "sk-12345" not in text and "hunter3" not in text and ":pw@" not in text
    assert "--api-key=***" in shown[0] and "postgres://u:***@h/db" in shown[1]
    assert html.stat().st_mode & 0o777 == 0o600
