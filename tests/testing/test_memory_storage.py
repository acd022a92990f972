"""`protokube storage --in-memory`: the same etcd v3 gRPC API with the database in memory — concurrent
writes, reads of past revisions (served by the SQLite reader threads, which wait while the writer
commits), a watch from a past revision; nothing on disk; nothing left after a restart."""

from __future__ import annotations

import asyncio
from pathlib import Path

from protokube.gen.etcdserverpb import rpc_pb2 as rpc
from tests.storage.helpers import StorageProcess, Stubs, run

WRITERS, WRITES = 8, 40


def test_in_memory_storage_serves_the_etcd_api(tmp_path: Path) -> None:
    server = StorageProcess(tmp_path / "data", "--in-memory").start()
    try:

        async def exercise(stubs: Stubs) -> None:
            first = await stubs.kv.Put(rpc.PutRequest(key=b"/k/start", value=b"0"))
            start = first.header.revision

            async def writer(n: int) -> None:
                for i in range(WRITES):
                    await stubs.kv.Put(rpc.PutRequest(key=f"/k/{n}".encode(), value=str(i).encode()))

            async def past_reader() -> list[int]:  # ranges at older revisions read SQLite's history
                counts = []
                for _ in range(WRITES):
                    latest = (await stubs.kv.Range(rpc.RangeRequest(key=b"/k/start"))).header.revision
                    past = await stubs.kv.Range(
                        rpc.RangeRequest(key=b"/k/", range_end=b"/k0", revision=max(start, latest - 5))
                    )
                    counts.append(past.count)
                return counts

            results = await asyncio.gather(*(writer(n) for n in range(WRITERS)), past_reader(), past_reader())
            assert all(1 <= count <= WRITERS + 1 for counts in results[WRITERS:] for count in counts)
            now = await stubs.kv.Range(rpc.RangeRequest(key=b"/k/", range_end=b"/k0"))
            assert now.header.revision == start + WRITERS * WRITES
            assert sorted(kv.value for kv in now.kvs if kv.key != b"/k/start") == [str(WRITES - 1).encode()] * WRITERS

            watch = stubs.watch.Watch()
            await watch.write(
                rpc.WatchRequest(create_request=rpc.WatchCreateRequest(key=b"/k/0", start_revision=start))
            )
            events = []
            async for response in watch:
                events += [event.kv.value for event in response.events]
                if len(events) == WRITES:
                    break
            assert events == [str(i).encode() for i in range(WRITES)]  # history from the past revision
            watch.cancel()

        run(server.address, exercise, timeout=120)
        assert not list((tmp_path / "data").glob("storage.db*"))  # nothing on disk
        assert server.terminate() == 0
        server = StorageProcess(tmp_path / "data", "--in-memory").start()

        async def empty(stubs: Stubs) -> None:
            assert (await stubs.kv.Range(rpc.RangeRequest(key=b"/k/", range_end=b"/k0"))).count == 0

        run(server.address, empty)
    finally:
        server.kill()
