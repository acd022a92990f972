"""How many requests a group commit waits for: those its last commit carried, and those that came meanwhile."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from protokube.gen.etcdserverpb import rpc_pb2 as pb
from protokube.server import apply
from protokube.server.backend import CommitBatch, SqliteBackend
from protokube.server.groupcommit import GroupCommitter
from protokube.server.lessor import Lessor
from protokube.server.mvcc import MvccStore
from protokube.server.watchhub import WatchHub

HELD = 0.3  # seconds the first commit is held: the longest the next one may wait for more requests


class GatedBackend(SqliteBackend):
    """Commits once `gate` is open, recording how many rows each one wrote."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir, in_memory=True)
        self.gate = threading.Event()
        self.rows_per_commit: list[int] = []

    def commit(self, batch: CommitBatch) -> None:
        assert self.gate.wait(10)
        super().commit(batch)
        self.rows_per_commit.append(len(batch.rows))


async def _commits(backend: GatedBackend) -> None:
    store = MvccStore(backend, Lessor(), cluster_id=1, member_id=1)
    committer = GroupCommitter(store, WatchHub(store))
    committer.start()

    def put(key: bytes) -> asyncio.Future:
        return asyncio.ensure_future(committer.submit(apply.evaluate_put, pb.PutRequest(key=key, value=b"v")))

    try:
        first = put(b"/a")
        await asyncio.sleep(0.05)  # the writer has taken /a and holds its commit
        during = [put(b"/b"), put(b"/c")]  # two more clients' requests arrive meanwhile
        await asyncio.sleep(HELD)
        backend.gate.set()
        await first
        after = put(b"/a")  # the answered client's next request, well within the commit's duration
        await asyncio.gather(*during, after)
    finally:
        await committer.stop()


def test_a_commit_waits_for_its_clients_and_those_that_came_while_it_ran(tmp_path: Path) -> None:
    backend = GatedBackend(tmp_path)
    try:
        asyncio.run(asyncio.wait_for(_commits(backend), 10))
    finally:
        backend.close()
    # Waiting only for as many as the first commit carried (1) would commit /b and /c at once: [1, 2, 1].
    assert backend.rows_per_commit == [1, 3]
