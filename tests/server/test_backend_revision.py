"""The backend's revision trigger: meta's revision row is updated in place, in stores of any age."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from protokube.server.backend import DB_FILE, CommitBatch, SqliteBackend

# The trigger stores made before 2026-11 were created with.
OLD_TRIGGER = """
CREATE TRIGGER history_revision AFTER INSERT ON history BEGIN
    INSERT OR REPLACE INTO meta (name, value) VALUES ('revision', NEW.rev);
END;
"""


def _row(rev: int, key: bytes) -> tuple[int, int, bytes, int, int, int, int, bytes]:
    return (rev, 0, key, rev, 1, 0, 0, b"v")


def _revision_row(path: Path) -> tuple[int, int]:
    """(rowid, value) of meta's revision row, read on a connection of its own."""
    with sqlite3.connect(path) as db:
        return db.execute("SELECT rowid, value FROM meta WHERE name = 'revision'").fetchone()


def test_commits_update_the_revision_row_in_place(tmp_path: Path) -> None:
    backend = SqliteBackend(tmp_path)
    try:
        backend.commit(CommitBatch(rows=[_row(2, b"/a")]))
        first = _revision_row(backend.path)
        backend.commit(CommitBatch(rows=[_row(3, b"/a"), _row(4, b"/b")]))
        rowid, revision = _revision_row(backend.path)
    finally:
        backend.close()
    assert revision == 4
    assert rowid == first[0]  # INSERT OR REPLACE gave the row a new rowid at every commit


def test_an_older_store_gets_the_new_trigger(tmp_path: Path) -> None:
    backend = SqliteBackend(tmp_path)
    backend.commit(CommitBatch(rows=[_row(2, b"/a")]))
    backend.close()
    with sqlite3.connect(tmp_path / DB_FILE) as db:  # as an older protokube left it
        db.execute("DROP TRIGGER history_revision")
        db.execute(OLD_TRIGGER)

    backend = SqliteBackend(tmp_path)
    try:
        loaded = backend.load()
        assert loaded.meta["revision"] == 2
        before = _revision_row(backend.path)
        backend.commit(CommitBatch(rows=[_row(3, b"/b")]))
        assert _revision_row(backend.path) == (before[0], 3)
        assert [row[2] for row in backend.load().current] == [b"/a", b"/b"]
    finally:
        backend.close()
