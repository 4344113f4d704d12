"""tfres.store: the SQLite index of records (real SQLite, real processes)."""

from __future__ import annotations

import sqlite3
import subprocess
import textwrap

import pytest

from tfres.errors import StoreError
from tfres.record import Record, save
from tfres.store import Store, default_store_path, open_store, resolve_record


def _record(rid: str, **kw) -> Record:
    r = Record(id=rid, **kw)
    r.fingerprint = {"host": {"hostname": "box-1"}}
    return r


def test_save_list_get(store_path):
    with open_store() as store:
        assert store.path == store_path  # $TFRES_STORE (set by conftest) is used
        n1 = store.save(
            _record("20240101T000000Z-aaaaaa", label="first", command=["python", "a.py"])
        )
        n2 = store.save(
            _record("20240102T000000Z-bbbbbb", kind="bench", workloads=[{"name": "cpu_matmul"}])
        )
        assert (n1, n2) == (1, 2)
        runs = store.runs()
        assert [r.id for r in runs] == ["20240102T000000Z-bbbbbb", "20240101T000000Z-aaaaaa"]
        assert runs[1].label == "first" and runs[1].host == "box-1"
        assert runs[1].what == "python a.py"
        assert runs[0].what == "bench: cpu_matmul"
        assert store.get(1).label == "first"
        assert store.get("2").kind == "bench"
        assert store.get("20240101T000000Z-aaaaaa").label == "first"
        assert store.get("20240101").label == "first"  # a date prefix is digits, not a number
        assert store.runs(limit=1)[0].n == 2


def test_saving_again_replaces_not_duplicates():
    with Store() as store:
        r = _record("r-1", label="running")
        n = store.save(r)
        r.status, r.label = "ok", "done"
        assert store.save(r) == n
        assert len(store.runs()) == 1
        assert store.get(n).status == "ok"


def test_prefix_ambiguous_and_missing():
    with Store() as store:
        for rid in ("run-a", "run-ab1", "run-ab2", "run-ab3"):
            store.save(_record(rid))
        assert store.get("run-a").id == "run-a"  # exact id wins over longer ids it prefixes
        assert store.get("run-ab2").id == "run-ab2"
        with pytest.raises(StoreError, match="ambiguous"):
            store.get("run-ab")
        with pytest.raises(StoreError, match="no run 'zzz'"):
            store.get("zzz")
        with pytest.raises(StoreError, match="no run '99'"):
            store.get(99)
        with pytest.raises(StoreError):
            store.get("run%")  # LIKE wildcards are escaped: no id starts with "run%"


def test_jobs_filter_and_records_oldest_first():
    with Store() as store:
        store.save(_record("w0", job="j", worker=0))
        store.save(_record("w1", job="j", worker=1))
        store.save(_record("other"))
        assert [r.worker for r in store.runs(job="j")] == [1, 0]
        assert [r.id for r in store.records(job="j")] == ["w0", "w1"]


def test_store_in_a_folder_and_unopenable(tmp_path):
    with Store(tmp_path) as store:
        assert store.path == tmp_path / "store.sqlite"
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot be opened"):
        Store(blocker / "sub" / "store.sqlite")


def test_default_path_without_env(monkeypatch):
    monkeypatch.delenv("TFRES_STORE")
    path = default_store_path()
    assert path.name == "store.sqlite" and "tfres" in str(path)


def test_damaged_body_is_one_line(store_path):
    with Store() as store:
        store.save(_record("r-damaged"))
    db = sqlite3.connect(store_path)
    db.execute("UPDATE runs SET body = ? WHERE id = 'r-damaged'", (b"not gzip",))
    db.commit()
    db.close()
    with Store() as store, pytest.raises(Exception) as info:
        store.get("r-damaged")
    assert "damaged" in str(info.value) and "\n" not in str(info.value)


def test_resolve_record_from_file_or_store(tmp_path):
    path = save(_record("from-file", label="file"), tmp_path / "x.json")
    assert resolve_record(str(path)).label == "file"
    with Store() as store:
        store.save(_record("in-store", label="stored"))
    assert resolve_record("in-store").label == "stored"
    assert resolve_record("1").label == "stored"


def test_two_processes_saving_at_once_lose_nothing(store_path, python):
    script = textwrap.dedent(
        """
        import sys
        from tfres.record import Record
        from tfres.store import Store
        tag = sys.argv[1]
        sys.stdout.write("ready\\n"); sys.stdout.flush()
        sys.stdin.readline()          # start together
        with Store() as store:
            for i in range(50):
                store.save(Record(id=f"{tag}-{i:03d}", label=tag))
        """
    )
    procs = [
        subprocess.Popen(
            [python, "-c", script, tag],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("p1", "p2")
    ]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    with Store(store_path) as store:
        runs = store.runs()
    assert len(runs) == 100
    assert {r.id for r in runs} == {f"{t}-{i:03d}" for t in ("p1", "p2") for i in range(50)}
    assert sorted(r.n for r in runs) == list(range(1, 101))  # numbers unique, none reused
