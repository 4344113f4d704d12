"""tfres.store: the SQLite index of records (real SQLite, real processes)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import textwrap

import pytest

from tfres.errors import StoreError
from tfres.record import Record, save
from tfres.store import (
    _SCHEMA,
    NoStoreError,
    Store,
    default_store_path,
    open_store,
    resolve_record,
)

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel


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


def test_a_new_store_and_its_journal_files_are_owner_only(store_path):
    os.umask(0o022)
    with Store() as store:
        store.save(_record("r-mode"))
        modes = {p.name: p.stat().st_mode & 0o777 for p in store_path.parent.glob("store.sqlite*")}
    assert modes and set(modes.values()) == {0o600}, modes


def test_reading_never_creates_a_store(tmp_path):
    typo = tmp_path / "stroe.sqlite"
    with pytest.raises(NoStoreError, match=f"no store at {typo}"):
        Store(typo, readonly=True)
    with pytest.raises(NoStoreError):
        resolve_record("1", store=typo)
    assert list(tmp_path.iterdir()) == []


def test_reading_leaves_the_store_file_untouched(tmp_path):
    """mode=ro: an old rollback-journal store is not switched to WAL (nor written at all)."""
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(_SCHEMA)
    db.close()
    with Store(path) as rw:  # the old code path: saves switch it to WAL; read it back as it was
        rw.save(_record("r-ro", label="kept"))
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = DELETE")
    db.close()
    before = (path.read_bytes(), sorted(p.name for p in tmp_path.iterdir()))
    with Store(path, readonly=True) as ro:
        assert [r.label for r in ro.runs()] == ["kept"]
        assert ro.get("1").label == "kept"
        with pytest.raises(StoreError, match="could not save"):
            ro.save(_record("r-new"))
    assert (path.read_bytes(), sorted(p.name for p in tmp_path.iterdir())) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only files anyway")
def test_a_store_on_a_read_only_folder_can_be_read(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    with Store(folder / "store.sqlite") as store:
        store.save(_record("r-1", label="ro"))
    (folder / "store.sqlite").chmod(0o444)
    folder.chmod(0o555)
    try:
        with Store(folder / "store.sqlite", readonly=True) as store:
            assert store.get("1").label == "ro"
    finally:
        folder.chmod(0o755)


def test_a_foreign_sqlite_file_is_not_a_store(tmp_path):
    path = tmp_path / "other.sqlite"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(StoreError, match="is not a tfres store"):
        Store(path, readonly=True)


def test_secrets_and_bad_bytes_in_the_listing(store_path):
    with Store() as store:
        store.save(
            _record("r-s", command=["python", "t.py", "--password", "hunter3"], label="a\udcff")
        )
    db = sqlite3.connect(store_path)  # a row saved by an older tfres, secret and all
    db.execute("UPDATE runs SET what = 'python t.py --api-key=sk-1 pg://u:pw@h/db'")
    db.commit()
    db.close()
    with Store(readonly=True) as store:
        (run,) = store.runs()
        assert run.what == "python t.py --api-key=*** pg://u:***@h/db" and run.label == "a\\xff"
        assert store.get("r-s").command == ["python", "t.py", "--password", "***"]


def test_odd_run_numbers_name_the_value(store_path):
    with Store() as store:
        store.save(_record("r-n"))
        for key in ("²", "99999999999999999999999", "0"):
            with pytest.raises(StoreError, match=f"no run '{key}'"):
                store.get(key)
        with pytest.raises(ValueError, match="got 0"):
            store.runs(limit=0)


def test_a_file_named_like_a_run_number_does_not_win(store_path, tmp_path, monkeypatch):
    with Store() as store:
        store.save(_record("r-3", label="stored"))
    monkeypatch.chdir(tmp_path)
    save(_record("r-file", label="file"), tmp_path / "1")
    assert resolve_record("1").label == "stored"
    assert resolve_record("./1").label == "file"
    save(_record("r-file2", label="file 2"), tmp_path / "2")
    with pytest.raises(StoreError, match="no run '2' in store .*; to read the file 2, write ./2"):
        resolve_record("2")
