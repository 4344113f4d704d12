"""The local store: every record tfres makes, indexed in one SQLite file.

The store lives at ``$TFRES_STORE`` if set, else ``<user data dir>/tfres/store.sqlite``
(``~/.local/share/tfres/store.sqlite`` on Linux); the CLI's ``--store`` overrides both.
Records are kept whole (gzip-compressed JSON) beside the columns ``tfres runs`` lists.
SQLite's locking makes concurrent saves from several processes safe: none is lost.

A new store file is made owner-only (mode 0600, like every file tfres writes): records hold
command lines, host names and environment variables. Commands that only read (``tfres runs``,
``show``, ``report``, ``compare``, ``export``) open the store read-only: they work on a
store they cannot write, and never create one at a mistyped path.
"""

from __future__ import annotations

import gzip
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from tfres.errors import RecordError, StoreError
from tfres.record import Record, dumps, gunzip_record, load, loads
from tfres.redact import redact_command, safe_text

__all__ = [
    "NoStoreError",
    "Store",
    "StoredRun",
    "default_store_path",
    "open_store",
    "resolve_record",
]

ENV_VAR = "TFRES_STORE"
#: the largest run number SQLite holds
_MAX_N = 2**63 - 1
#: how long a save waits for another process holding the database
_BUSY_SECONDS = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT UNIQUE NOT NULL,
    kind TEXT NOT NULL,
    label TEXT,
    host TEXT,
    created_at TEXT NOT NULL,
    elapsed_seconds REAL,
    status TEXT NOT NULL,
    what TEXT,
    job TEXT,
    worker INTEGER,
    body BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_job ON runs(job);
"""


def default_store_path() -> Path:
    """``$TFRES_STORE`` if set, else the SQLite file under the user's data directory."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("tfres", appauthor=False)) / "store.sqlite"


class NoStoreError(StoreError):
    """A command that only reads was pointed at a store that does not exist."""


def _reason(err: Exception) -> str:
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return str(err)


@dataclass(frozen=True)
class StoredRun:
    """One row of ``tfres runs``."""

    n: int
    id: str
    kind: str
    label: str | None
    host: str | None
    created_at: str
    elapsed_seconds: float | None
    status: str
    what: str | None
    job: str | None
    worker: int | None


def _what(record: Record) -> str | None:
    if record.command:
        # "python3 train.py --epochs 3", not "/home/me/.venv/bin/python3 ...": the list
        # shows what ran; the record keeps the full command
        command = redact_command(record.command)
        return " ".join([os.path.basename(command[0]), *command[1:]])
    if record.workloads:
        names: list[str] = []
        for w in record.workloads:
            name = str(w.get("name"))
            if name not in names:
                names.append(name)
        return "bench: " + ", ".join(names)
    return None


class Store:
    """An open store. Use :func:`open_store`, or ``Store(path)`` as a context manager."""

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, readonly: bool = False
    ) -> None:
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        self.readonly = readonly
        if self.path.is_dir():
            self.path = self.path / "store.sqlite"
        if readonly and not self.path.exists():
            raise NoStoreError(
                f"no store at {self.path}; check --store or ${ENV_VAR}, "
                "or record a run first with `tfres run -- CMD`"
            )
        try:
            if readonly:
                self._db = self._connect_readonly()
            else:
                self._db = self._connect()
                self._setup()
        except (sqlite3.Error, OSError) as err:
            raise StoreError(
                f"store {self.path} cannot be opened ({_reason(err)}); "
                f"pass another with --store or ${ENV_VAR}"
            ) from err

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:  # a new store is owner-only; an existing one keeps the mode its owner gave it
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            pass
        db = sqlite3.connect(self.path, timeout=_BUSY_SECONDS, isolation_level=None)
        db.execute(f"PRAGMA busy_timeout = {int(_BUSY_SECONDS * 1000)}")
        return db

    def _connect_readonly(self) -> sqlite3.Connection:
        """``mode=ro``: reads a store on a read-only disk or owned by another user."""
        from urllib.parse import quote

        if not self.path.is_file():
            raise StoreError(f"store {self.path} is not a file; pass a store with --store")
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        db = sqlite3.connect(uri, uri=True, timeout=_BUSY_SECONDS, isolation_level=None)
        db.execute(f"PRAGMA busy_timeout = {int(_BUSY_SECONDS * 1000)}")
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        if "runs" not in tables:
            db.close()
            raise StoreError(
                f"{self.path} is not a tfres store (no runs table); check --store or ${ENV_VAR}"
            )
        return db

    def _setup(self) -> None:
        """WAL mode and the schema. Switching to WAL can answer "database is locked" at once,
        without waiting, while another process creates the same new store: retry then."""
        deadline = time.monotonic() + _BUSY_SECONDS
        while True:
            try:
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.executescript(_SCHEMA)
                return
            except sqlite3.OperationalError as err:
                busy = "locked" in str(err) or "busy" in str(err)
                if not busy or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        try:
            self._db.execute("BEGIN IMMEDIATE")
            yield self._db
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def save(self, record: Record) -> int:
        """Save (or replace) ``record``; returns its short number for ``tfres show N``."""
        body = gzip.compress(dumps(record).encode("utf-8"), mtime=0)
        row = (
            record.id,
            record.kind,
            None if record.label is None else safe_text(record.label),
            record.host,
            record.created_at,
            record.elapsed_seconds,
            record.status,
            _what(record),
            record.job,
            record.worker,
            body,
        )
        try:
            with self._tx() as db:
                # update first: an upsert would burn a number of the AUTOINCREMENT sequence
                # each time a record is saved again, leaving gaps in `tfres runs`
                updated = db.execute(
                    "UPDATE runs SET kind=?, label=?, host=?, created_at=?, elapsed_seconds=?,"
                    " status=?, what=?, job=?, worker=?, body=? WHERE id=?",
                    (*row[1:], record.id),
                ).rowcount
                if not updated:
                    db.execute(
                        "INSERT INTO runs (id, kind, label, host, created_at, elapsed_seconds,"
                        " status, what, job, worker, body) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                        row,
                    )
                n = db.execute("SELECT n FROM runs WHERE id = ?", (record.id,)).fetchone()[0]
        except sqlite3.Error as err:
            raise StoreError(
                f"store {self.path} could not save record {record.id} ({err})"
            ) from err
        return int(n)

    def runs(self, *, limit: int | None = None, job: str | None = None) -> list[StoredRun]:
        """The stored runs, newest first."""
        sql = (
            "SELECT n, id, kind, label, host, created_at, elapsed_seconds, status, what, job,"
            " worker FROM runs"
        )
        params: list[object] = []
        if job is not None:
            sql += " WHERE job = ?"
            params.append(job)
        sql += " ORDER BY n DESC"
        if limit is not None:
            if not 0 < limit <= _MAX_N:
                raise ValueError(f"limit must be a number from 1 to {_MAX_N} (got {limit})")
            sql += " LIMIT ?"
            params.append(limit)
        try:
            rows = self._db.execute(sql, params).fetchall()
        except sqlite3.Error as err:
            raise StoreError(f"store {self.path} cannot be read ({err})") from err
        runs = [StoredRun(*row) for row in rows]
        # rows saved by an older tfres may hold a secret in the command line
        return [
            replace(r, what=" ".join(redact_command(r.what.split(" "))) if r.what else r.what)
            for r in runs
        ]

    def get(self, key: str | int) -> Record:
        """A record by its number (``12``), its id, or a unique prefix of its id."""
        text = str(key).strip()
        if not text:
            raise StoreError("give a run number or id; list them with `tfres runs`")
        like = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        db = self._db
        try:
            rows: list[tuple[str, bytes]] = []
            if text.isascii() and text.isdigit() and int(text) <= _MAX_N:
                rows = db.execute("SELECT id, body FROM runs WHERE n = ?", (int(text),)).fetchall()
            if not rows:  # an id, or a prefix of one (a date prefix is all digits too)
                rows = db.execute("SELECT id, body FROM runs WHERE id = ?", (text,)).fetchall()
            if not rows:
                rows = db.execute(
                    "SELECT id, body FROM runs WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (like,)
                ).fetchall()
        except sqlite3.Error as err:
            raise StoreError(f"store {self.path} cannot be read ({err})") from err
        if not rows:
            hint = f"; to read the file {text}, write ./{text}" if Path(text).exists() else ""
            raise StoreError(
                f"no run {text!r} in store {self.path}; list them with `tfres runs`{hint}"
            )
        if len(rows) > 1:
            raise StoreError(f"run {text!r} is ambiguous in store {self.path}; give more of the id")
        record_id, body = rows[0]
        source = f"run {record_id} in store {self.path}"
        if not isinstance(body, bytes):
            raise RecordError(f"{source} is damaged (its body is not compressed JSON)")
        return loads(gunzip_record(body, source=source), source=source)

    def records(self, *, job: str | None = None) -> list[Record]:
        """Every stored record (of ``job``, if given), oldest first."""
        return [self.get(run.id) for run in reversed(self.runs(job=job))]


def open_store(path: str | os.PathLike[str] | None = None) -> Store:
    """Open the store at ``path``, ``$TFRES_STORE`` or the default location."""
    return Store(path)


def resolve_record(ref: str, *, store: str | os.PathLike[str] | None = None) -> Record:
    """A record from a file path or a store reference (number, id or prefix of an id).

    ``ref`` is a file when it has a path separator or ends in ``.json`` or ``.gz``
    (``runs/a.json``, ``./3``); anything else names a stored run, even when a file of that
    name is in the working folder: ``3`` is run 3, ``./3`` the file. The store is opened
    read-only and never created.
    """
    p = Path(ref)
    looks_like_path = (
        p.suffix in (".json", ".gz")
        or os.sep in ref
        or (os.altsep is not None and os.altsep in ref)
    )
    if looks_like_path:
        return load(p)
    with Store(store, readonly=True) as s:
        return s.get(ref)
