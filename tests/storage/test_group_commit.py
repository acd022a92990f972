"""Group commit, observed through the in-process API: many writes, few SQLite commits."""

from __future__ import annotations

import asyncio

import grpc
from etcdserverpb import rpc_pb2 as pb
from etcdserverpb import rpc_pb2_grpc

from server.app import start_storage

WRITERS = 32
PUTS_EACH = 40


async def concurrent_puts(data_dir, **options) -> tuple[int, int]:
    """(writes, commits) made by WRITERS concurrent clients."""
    server = await start_storage("127.0.0.1:0", data_dir, compaction_retention=0, **options)
    try:
        commits_before = server.commits
        async with grpc.aio.insecure_channel(server.address) as channel:
            kv = rpc_pb2_grpc.KVStub(channel)

            async def writer(n: int) -> list[int]:
                revs = []
                for i in range(PUTS_EACH):
                    r = await kv.Put(pb.PutRequest(key=b"/gc/%d/%d" % (n, i), value=b"v"))
                    revs.append(r.header.revision)
                return revs

            results = await asyncio.gather(*(writer(n) for n in range(WRITERS)))
            revs = sorted(rev for revs in results for rev in revs)
            assert revs == list(range(2, 2 + WRITERS * PUTS_EACH))  # one revision per write, no gaps
            count = await kv.Range(pb.RangeRequest(key=b"/gc/", range_end=b"/gc0", count_only=True))
            assert count.count == WRITERS * PUTS_EACH
        return server.writes, server.commits - commits_before
    finally:
        await server.stop()


def test_concurrent_writes_share_commits(tmp_path):
    writes, commits = asyncio.run(asyncio.wait_for(concurrent_puts(tmp_path / "on"), 60))
    assert writes == WRITERS * PUTS_EACH
    assert commits <= writes / 4, (writes, commits)


def test_group_commit_off_commits_every_write(tmp_path):
    writes, commits = asyncio.run(asyncio.wait_for(concurrent_puts(tmp_path / "off", group_commit=False), 60))
    assert writes == commits == WRITERS * PUTS_EACH
