"""A storage database kept in memory (``protokube storage --in-memory``): for tests, gone at exit.

SQLite's memdb VFS shares one database between the connections of this process that open the same
name (the writer's and each reader thread's), as files share one on disk. It has no write-ahead log:
readers wait (``busy_timeout``) while the writer commits, which in memory takes microseconds.
"""

from __future__ import annotations

import itertools
import os
import sqlite3

BUSY_TIMEOUT_MS = 10_000
_names = itertools.count()


def new_database() -> str:
    """The URI of a fresh in-memory database, unique in this process."""
    return f"file:/protokube-{os.getpid()}-{next(_names)}?vfs=memdb"


def connect(uri: str) -> sqlite3.Connection:
    """A connection to the in-memory database ``uri`` (it lives while one connection to it is open)."""
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return conn
