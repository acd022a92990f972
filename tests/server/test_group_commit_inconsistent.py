"""A durable commit that cannot be applied in memory ends the storage process (as etcd panics), so that
it never serves from a memory that no longer matches its disk, and starts again from the disk.

The store below fails to apply its second commit: the fault injected is in its memory only (the state
that takes the committed keys), the SQLite database, the store and the committer are the real ones."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from sortedcontainers import SortedDict

from protokube.gen.etcdserverpb import rpc_pb2 as pb
from protokube.server import apply
from protokube.server.backend import SqliteBackend
from protokube.server.errors import StorageError
from protokube.server.groupcommit import EXIT_INCONSISTENT, GroupCommitter
from protokube.server.lessor import Lessor
from protokube.server.mvcc import Entry, MvccStore
from protokube.server.watchhub import WatchHub

ROOT = Path(__file__).resolve().parents[2]


class FailingSecondKey(SortedDict):
    """A store's state that cannot take the second key a commit sets (each commit below sets one)."""

    keys_set = 0

    def __setitem__(self, key: bytes, entry: Entry) -> None:
        self.keys_set += 1
        if self.keys_set == 2:
            raise RuntimeError("injected: the memory cannot take this commit")
        super().__setitem__(key, entry)


async def put(committer: GroupCommitter, key: bytes) -> object:
    request = pb.PutRequest(key=key, value=b"v")
    return await asyncio.wait_for(committer.submit(apply.evaluate_put, request), 10)


def keys_on_disk(data_dir: Path) -> list[bytes]:
    backend = SqliteBackend(data_dir)
    try:
        return [row[2] for row in backend.load().current]  # (rev, sub, key, ...)
    finally:
        backend.close()


def failing_committer(data_dir: Path, **options: Any) -> tuple[GroupCommitter, SqliteBackend]:
    """A started committer over the real database in ``data_dir`` and a store whose state is FailingSecondKey."""
    backend = SqliteBackend(data_dir)
    store = MvccStore(backend, Lessor(), cluster_id=1, member_id=1)
    store.state = FailingSecondKey()
    committer = GroupCommitter(store, WatchHub(store), **options)
    committer.start()
    return committer, backend


async def _write_until_inconsistent(data_dir: Path, noted: list[BaseException]) -> None:
    committer, backend = failing_committer(data_dir, on_inconsistent=noted.append)
    try:
        await put(committer, b"/first")
        with pytest.raises(StorageError) as failed:
            await put(committer, b"/second")
        assert failed.value.message == "etcdserver: internal error"
    finally:
        await committer.stop()
        backend.close()


def test_the_committer_reports_a_commit_it_could_not_apply(tmp_path: Path) -> None:
    noted: list[BaseException] = []
    asyncio.run(_write_until_inconsistent(tmp_path, noted))
    assert [str(err) for err in noted] == ["injected: the memory cannot take this commit"]
    assert keys_on_disk(tmp_path) == [b"/first", b"/second"]  # durable: the disk has it


def test_the_storage_process_exits_on_a_commit_it_could_not_apply(tmp_path: Path) -> None:
    """With the committer's default, the process ends at once with EXIT_INCONSISTENT and says why; the
    write it could not apply is on the disk it starts again from."""
    script = textwrap.dedent(
        f"""
        import asyncio
        from pathlib import Path
        from tests.server.test_group_commit_inconsistent import failing_committer, put

        async def main():
            committer, _ = failing_committer(Path({str(tmp_path)!r}))
            await put(committer, b"/first")
            await put(committer, b"/second")
            print("still running after the failed apply", flush=True)

        asyncio.run(main())
        """
    )
    ended = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert ended.returncode == EXIT_INCONSISTENT, ended.stderr
    assert "still running" not in ended.stdout
    assert "a durable commit could not be applied in memory" in ended.stderr
    assert "injected: the memory cannot take this commit" in ended.stderr
    assert keys_on_disk(tmp_path) == [b"/first", b"/second"]
