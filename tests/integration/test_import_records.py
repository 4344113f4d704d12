"""``tfres import``: record files from other machines into the local store (no server)."""

from __future__ import annotations

import gzip

from tfres.cli import main
from tfres.record import Record, save
from tfres.store import Store


def worker_file(folder, n: int, *, gz: bool = False):
    record = Record(kind="run", job="jobI", worker=n, label=f"w{n}", status="ok")
    record.fingerprint = {"host": {"hostname": f"machine{n}"}}
    path = folder / (f"w{n}.json.gz" if gz else f"w{n}.json")
    save(record, path)
    return record, path


def test_files_of_two_machines_become_one_job_in_the_store(tmp_path, store_path, capsys):
    a, pa = worker_file(tmp_path, 0)
    b, pb = worker_file(tmp_path, 1, gz=True)
    assert main(["import", str(pa), str(pb)]) == 0
    out = capsys.readouterr().out
    assert "run 1 (job jobI worker 0, machine0)" in out and "run 2" in out
    with Store(store_path) as store:
        assert [r.id for r in store.records(job="jobI")] == [a.id, b.id]
    assert main(["import", str(pa)]) == 0  # again: replaced, keeps its number
    assert "run 1 " in capsys.readouterr().out


def test_a_bad_file_adds_nothing(tmp_path, store_path, capsys):
    _, good = worker_file(tmp_path, 0)
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(gzip.compress(b'{"not": "a record"}'))
    assert main(["import", str(good), str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.json.gz" in err and err.count("\n") == 1
    assert not store_path.exists() or Store(store_path).runs() == []
