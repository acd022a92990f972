"""SQLite persistence: schema, the write transaction of a commit batch, history reads.

All writes run on one dedicated writer thread (one connection; server/writer.py); history
reads run on a small pool of reader threads, each with its own connection. WAL mode lets
readers see a consistent snapshot while the writer commits; synchronous=FULL makes every
commit durable (fsync) before it returns.

Tables:
  history  every change of every key: (rev, sub) orders changes, sub numbering the changes
           of one revision; deleted=1 marks a tombstone. mod_revision is rev. The current
           state is the newest row of each key, loaded into memory at startup.
  leases   granted leases (id, ttl).
  meta     counters: current and compacted revision, cluster and member ids. The revision
           is the newest history row's, kept by a trigger in the transaction that inserts it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client import Histogram

from protokube.server import memorydb
from protokube.server.writer import Writer

# The revision trigger is made again at each open (in the schema's transaction), so that older stores get
# this one too: an upsert updates meta's revision row in place, where their INSERT OR REPLACE deleted and
# re-inserted it, dirtying meta's key index as well (one write-ahead log page more in every commit).
SCHEMA = """
BEGIN;
CREATE TABLE IF NOT EXISTS history (
    rev INTEGER NOT NULL,
    sub INTEGER NOT NULL,
    key BLOB NOT NULL,
    create_rev INTEGER NOT NULL,
    version INTEGER NOT NULL,
    lease INTEGER NOT NULL,
    deleted INTEGER NOT NULL,
    value BLOB NOT NULL,
    PRIMARY KEY (rev, sub)
);
CREATE INDEX IF NOT EXISTS history_by_key ON history (key, rev);
CREATE TABLE IF NOT EXISTS leases (id INTEGER PRIMARY KEY, ttl INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
DROP TRIGGER IF EXISTS history_revision;
CREATE TRIGGER history_revision AFTER INSERT ON history BEGIN
    INSERT INTO meta (name, value) VALUES ('revision', NEW.rev)
        ON CONFLICT (name) DO UPDATE SET value = excluded.value;
END;
COMMIT;
"""

DB_FILE = "storage.db"

# A history row: (rev, sub, key, create_rev, version, lease, deleted, value).
Row = tuple[int, int, bytes, int, int, int, int, bytes]
ROW_COLUMNS = "rev, sub, key, create_rev, version, lease, deleted, value"
ROWS_PER_INSERT = 64  # history rows one INSERT statement writes (512 parameters)


@dataclass
class CommitBatch:
    """Everything one commit writes, in one SQLite transaction."""

    rows: list[Row] = field(default_factory=list)
    leases_granted: list[tuple[int, int]] = field(default_factory=list)
    leases_revoked: list[int] = field(default_factory=list)
    meta: dict[str, int] = field(default_factory=dict)


@dataclass
class LoadedState:
    meta: dict[str, int]
    current: list[Row]
    leases: list[tuple[int, int]]


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA cache_size=-65536")
    return conn


def _key_range_sql(key: bytes, end: bytes | None) -> tuple[str, list]:
    """SQL condition for a key range: end None = single key; b"" = every key >= key."""
    if end is None:
        return "key = ?", [key]
    if end == b"":
        return "key >= ?", [key]
    return "key >= ? AND key < ?", [key, end]


@functools.cache
def _insert_sql(rows: int) -> str:
    return f"INSERT INTO history ({ROW_COLUMNS}) VALUES " + ",".join(["(?,?,?,?,?,?,?,?)"] * rows)


def _statements(batch: CommitBatch) -> list[tuple[str, list]]:
    """The statements that write a batch: its rows ROWS_PER_INSERT at a time, then leases and meta."""
    rows = batch.rows
    out = [
        (_insert_sql(len(chunk)), [value for row in chunk for value in row])
        for chunk in (rows[i : i + ROWS_PER_INSERT] for i in range(0, len(rows), ROWS_PER_INSERT))
    ]
    out += [("INSERT OR REPLACE INTO leases (id, ttl) VALUES (?, ?)", list(lease)) for lease in batch.leases_granted]
    out += [("DELETE FROM leases WHERE id = ?", [lease_id]) for lease_id in batch.leases_revoked]
    out += [("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", list(item)) for item in batch.meta.items()]
    return out


class SqliteBackend:
    """The SQLite database of one data directory (or, ``in_memory``, of this process's memory)."""

    def __init__(self, data_dir: Path, commit_duration: Histogram | None = None, in_memory: bool = False) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.commit_duration = commit_duration  # observes each commit's seconds (etcd's backend metric)
        self.path = data_dir / DB_FILE
        self._connect = functools.partial(memorydb.connect, memorydb.new_database()) if in_memory else self._file
        self._writer = self._connect()
        self._writer.executescript(SCHEMA)
        self.writer = Writer()
        self.read_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="sqlite-reader")
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self.commits = 0  # SQLite write transactions committed (group commit makes this << writes)
        # The database and its write-ahead log's size, measured again by the writer thread after each write
        # (as bbolt's size, it changes only when a write commits): the quota's check of each put reads it.
        self.disk_bytes = self._file_bytes(("", "-wal"))

    def _file(self) -> sqlite3.Connection:
        return _connect(self.path)

    def _reader(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    # --- startup ------------------------------------------------------------------------
    def load(self) -> LoadedState:
        """Meta counters, every live key (newest row per key, not a tombstone), leases."""
        db = self._writer
        meta = dict(db.execute("SELECT name, value FROM meta"))
        current = db.execute(
            f"SELECT {ROW_COLUMNS} FROM history AS h WHERE rev = "
            "(SELECT MAX(rev) FROM history WHERE key = h.key) AND deleted = 0 ORDER BY key"
        ).fetchall()
        leases = db.execute("SELECT id, ttl FROM leases").fetchall()
        return LoadedState(meta, current, leases)

    def set_meta(self, values: dict[str, int]) -> None:
        """Write meta counters in their own transaction (startup only)."""
        self.commit(CommitBatch(meta=values))

    # --- writer thread ----------------------------------------------------------------
    def commit(self, batch: CommitBatch) -> None:
        """Write one batch in one transaction and return once it is durable.

        In as few statements as it can: after each one the writer thread must take the GIL back,
        under load from the event loop's thread. A group commit's rows (up to ROWS_PER_INSERT) are
        one statement, which is a transaction of its own (the connection is in autocommit mode)."""
        started = time.monotonic()
        statements = _statements(batch)
        try:
            if len(statements) == 1:
                self._writer.execute(*statements[0])
            else:
                self._transaction(statements)
        finally:
            self._measure()
        self.commits += 1
        if self.commit_duration is not None:
            self.commit_duration.observe(time.monotonic() - started)

    def _transaction(self, statements: list[tuple[str, list]]) -> None:
        db = self._writer
        db.execute("BEGIN")
        try:
            for sql, params in statements:
                db.execute(sql, params)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite itself rolls back after some errors (SQLITE_FULL)
                db.execute("ROLLBACK")
            raise

    def compact_step(self, done: int, target: int) -> None:
        """Physically remove history made unreachable by compacting from `done` to `target`.

        After compaction to C, a key keeps its newest row at or below C (unless that row is
        a tombstone below C) and every row above C: reads at revision >= C and watches from
        revision >= C still find everything they need.
        """
        db = self._writer
        db.execute("BEGIN")
        try:
            # Rows superseded by a newer row at or below target, for keys changed since `done`.
            db.execute(
                "DELETE FROM history WHERE rowid IN ("
                " SELECT h.rowid FROM history AS h"
                " WHERE h.key IN (SELECT key FROM history WHERE rev > ? AND rev <= ?)"
                " AND h.rev < (SELECT MAX(rev) FROM history WHERE key = h.key AND rev <= ?))",
                (done, target, target),
            )
            # Tombstones below target are the newest row of their key: nothing to keep.
            db.execute("DELETE FROM history WHERE deleted = 1 AND rev >= ? AND rev < ?", (done, target))
            db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('compact_done', ?)", (target,))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite itself rolls back after some errors (SQLITE_FULL)
                db.execute("ROLLBACK")
            raise
        finally:
            self._measure()
        self.commits += 1

    def vacuum(self) -> None:
        """Defragment: rewrite the database compactly, then give the write-ahead log's space back."""
        try:
            self._writer.execute("VACUUM")
            self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            self._measure()

    # --- reader threads ---------------------------------------------------------------
    def range_at(self, key: bytes, end: bytes | None, rev: int) -> list[Row]:
        """Keys live at revision `rev` in the range, in key order."""
        cond, args = _key_range_sql(key, end)
        rows = (
            self._reader()
            .execute(
                f"SELECT {ROW_COLUMNS} FROM history AS h WHERE {cond} AND rev = "
                "(SELECT MAX(rev) FROM history WHERE key = h.key AND rev <= ?) ORDER BY key",
                [*args, rev],
            )
            .fetchall()
        )
        return [r for r in rows if not r[6]]

    def events(self, key: bytes, end: bytes | None, first: int, last: int, max_bytes: int) -> tuple[list[Row], int]:
        """Changes in the key range from revision `first` on, in (rev, sub) order: up to `last`, or
        fewer whole revisions once their keys and values hold max_bytes; and the last revision
        the rows cover."""
        cond, args = _key_range_sql(key, end)
        query = f"SELECT {ROW_COLUMNS} FROM history WHERE rev >= ? AND rev <= ? AND {cond} ORDER BY rev, sub"
        rows: list[Row] = []
        size = 0
        with contextlib.closing(self._reader().execute(query, [first, last, *args])) as cursor:
            for row in cursor:
                if rows and size >= max_bytes and row[0] != rows[-1][0]:
                    return rows, rows[-1][0]
                rows.append(row)
                size += len(row[2]) + len(row[7] or b"")
        return rows, last

    def previous(self, keys_revs: Iterable[tuple[bytes, int]]) -> list[Row | None]:
        """For each (key, rev): the key's newest row before rev (None if there is none)."""
        db = self._reader()
        out: list[Row | None] = []
        for key, rev in keys_revs:
            out.append(
                db.execute(
                    f"SELECT {ROW_COLUMNS} FROM history WHERE key = ? AND rev < ? ORDER BY rev DESC LIMIT 1",
                    (key, rev),
                ).fetchone()
            )
        return out

    def _file_bytes(self, suffixes: Iterable[str]) -> int:
        """The size of the database's files with these suffixes ("" is the database itself)."""
        total = 0
        for suffix in suffixes:
            with contextlib.suppress(OSError):
                total += os.path.getsize(f"{self.path}{suffix}")
        return total

    def _measure(self) -> None:
        """Measure the size after a write, on the writer thread: before the write's caller hears of it, and
        off the event loop's thread, whose quota checks (one per put) then only read it."""
        self.disk_bytes = self._file_bytes(("", "-wal"))

    def sizes(self) -> tuple[int, int]:
        """(bytes of the database files, bytes of pages in use)."""
        total = self._file_bytes(("", "-wal", "-shm"))
        db = self._reader()
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
        return total, (pages - free) * page_size

    def close(self) -> None:
        self.writer.close()
        self.read_executor.shutdown(wait=True)
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
        self._writer.close()
