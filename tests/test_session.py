"""One record lifecycle (``tfres.session``): outputs checked first, saved once, never lost."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tfres.cli import main
from tfres.errors import RecordError, StoreError
from tfres.record import Record, load
from tfres.sampler.sampler import Sampler
from tfres.session import RecordSession, check_output_path
from tfres.store import Store


def test_a_writable_path_passes_and_leaves_nothing(tmp_path: Path) -> None:
    assert check_output_path(tmp_path / "r.json") == tmp_path / "r.json"
    assert check_output_path(tmp_path / "new" / "deeper" / "r.json")  # folders made on save
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/proc/x.json", "--out /proc/x.json cannot be written"),
        ("", "--out is empty"),
    ],
)
def test_an_unwritable_path_is_one_line(path: str, words: str) -> None:
    with pytest.raises(RecordError) as info:
        check_output_path(path)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_a_folder_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="is a folder"):
        check_output_path(tmp_path, what="--html")


def test_check_outputs_opens_the_store_before_the_work(tmp_path: Path) -> None:
    session = RecordSession(Record(kind="run"), store=tmp_path / "s.sqlite", out=tmp_path / "r")
    session.check_outputs()
    with pytest.raises(StoreError, match="cannot be opened"):
        RecordSession(Record(kind="run"), store="/proc/s.sqlite").check_outputs()


def test_the_lifecycle_saves_once_with_the_timeline_and_the_number(tmp_path: Path) -> None:
    record = Record(kind="monitor", label="x")
    session = RecordSession(
        record, Sampler(0.02), store=tmp_path / "s.sqlite", out=tmp_path / "r.json"
    )
    session.check_outputs()
    session.take_fingerprint()
    session.start()
    session.sampler.sample_once()  # type: ignore[union-attr]
    record.status = "ok"
    saved = session.save()
    assert saved.error is None and saved.fallback_path is None
    assert saved.store_number == 1 and saved.store_path == tmp_path / "s.sqlite"
    assert record.samples and record.started_at and record.ended_at
    assert record.interval_seconds == 0.02 and record.fingerprint
    assert load(tmp_path / "r.json").id == record.id
    with Store(tmp_path / "s.sqlite") as store:
        assert [r.id for r in store.runs()] == [record.id]  # once


def test_a_record_that_cannot_go_anywhere_asked_goes_to_the_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    session = RecordSession(Record(kind="run"), store="/proc/s.sqlite", out="/proc/r.json")
    saved = session.save(diagnose=False)
    assert saved.fallback_path == tmp_path / f"tfres-{saved.record.id}.json"
    assert load(saved.fallback_path).id == saved.record.id
    assert saved.error is not None
    assert "could not write /proc/r.json" in saved.error
    assert f"written to {saved.fallback_path} instead" in saved.error


def test_a_store_that_fails_is_said_but_the_file_is_enough(tmp_path: Path) -> None:
    session = RecordSession(Record(kind="run"), store="/proc/s.sqlite", out=tmp_path / "r.json")
    saved = session.save(diagnose=False)
    assert saved.out_path == tmp_path / "r.json" and saved.fallback_path is None
    assert saved.error is not None and "/proc/s.sqlite" in saved.error


def test_tfres_run_checks_out_before_the_command_runs(tmp_path: Path, capsys) -> None:
    marker = tmp_path / "ran"
    code = main(["run", "--no-store", "--out", "/proc/x.json", "--", "touch", str(marker)])
    assert code == 1 and not marker.exists()
    err = capsys.readouterr().err.strip()
    assert err == (
        "tfres: error: --out /proc/x.json cannot be written (No such file or directory in "
        "/proc); pick another path"
    )


def test_tfres_bench_checks_html_before_the_work(store_path: Path, capsys) -> None:
    code = main(["bench", "--quick", "--only", "cpu_matmul", "--no-store", "--html", "/proc/b"])
    assert code == 1
    assert "--html /proc/b cannot be written" in capsys.readouterr().err
    assert not store_path.exists()


def test_tfres_monitor_gets_its_store_number(store_path: Path) -> None:
    import tfres

    with tfres.monitor(label="m", interval=0.02) as m:
        pass
    assert m.store_number == 1 and m.record.status == "ok"
    assert os.path.exists(store_path)
