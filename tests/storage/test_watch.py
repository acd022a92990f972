"""Watch over gRPC: several watches per stream, ordering, cancel, progress, filters, prev_kv,
compacted and future start revisions, catch-up from history while writes go on."""

from __future__ import annotations

import asyncio
import urllib.request

import grpc
import pytest

from protokube.gen.etcdserverpb import rpc_pb2 as pb
from protokube.gen.mvccpb import kv_pb2

from .helpers import Stubs, run

PUT, DELETE = kv_pb2.Event.PUT, kv_pb2.Event.DELETE
NOPUT, NODELETE = pb.WatchCreateRequest.NOPUT, pb.WatchCreateRequest.NODELETE


def prefix_end(prefix: bytes) -> bytes:
    return prefix[:-1] + bytes([prefix[-1] + 1])


class WatchClient:
    """One Watch stream, read with timeouts."""

    def __init__(self, stubs) -> None:
        self.call = stubs.watch.Watch()

    async def create(self, **kw) -> pb.WatchResponse:
        await self.call.write(pb.WatchRequest(create_request=pb.WatchCreateRequest(**kw)))
        created = await self.read()
        assert created.created
        return created

    async def read(self, timeout: float = 5.0) -> pb.WatchResponse:
        return await asyncio.wait_for(self.call.read(), timeout)

    async def nothing_within(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self.call.read(), seconds)
        except TimeoutError:
            return True
        return False

    async def events(self, count: int, watch_id: int | None = None) -> list[tuple[int, kv_pb2.Event]]:
        """Read responses until `count` events arrived: (watch_id, event) in order."""
        got: list[tuple[int, kv_pb2.Event]] = []
        while len(got) < count:
            r = await self.read()
            assert not r.canceled, r
            if watch_id is not None and r.watch_id != watch_id:
                continue
            revs = [ev.kv.mod_revision for ev in r.events]
            assert revs == sorted(revs)
            got += [(r.watch_id, ev) for ev in r.events]
        return got


def test_several_watches_per_stream(storage, prefix):
    async def test(s):
        w = WatchClient(s)
        a = await w.create(key=prefix + b"a")
        everything = await w.create(key=prefix, range_end=prefix_end(prefix))
        assert a.watch_id != everything.watch_id
        revs = []
        for i in range(10):
            key = prefix + (b"a" if i % 2 == 0 else b"b")
            revs.append((await s.kv.Put(pb.PutRequest(key=key, value=b"%d" % i))).header.revision)
        got = await w.events(15)  # 10 on the range watch, 5 on the key watch
        by_watch: dict[int, list[int]] = {}
        for watch_id, ev in got:
            by_watch.setdefault(watch_id, []).append(ev.kv.mod_revision)
        assert by_watch[everything.watch_id] == revs  # every revision once, in order
        assert by_watch[a.watch_id] == revs[::2]

    run(storage.address, test)


def test_events_of_one_txn_share_a_response(storage, prefix):
    async def test(s):
        w = WatchClient(s)
        await w.create(key=prefix, range_end=prefix_end(prefix))
        ops = [pb.RequestOp(request_put=pb.PutRequest(key=prefix + b"%d" % i)) for i in range(5)]
        txn = await s.kv.Txn(pb.TxnRequest(success=ops))
        r = await w.read()
        assert len(r.events) == 5 and {ev.kv.mod_revision for ev in r.events} == {txn.header.revision}

    run(storage.address, test)


def test_cancel(storage, prefix):
    async def test(s):
        w = WatchClient(s)
        created = await w.create(key=prefix + b"k")
        await w.call.write(pb.WatchRequest(cancel_request=pb.WatchCancelRequest(watch_id=created.watch_id)))
        r = await w.read()
        assert r.canceled and r.watch_id == created.watch_id
        await s.kv.Put(pb.PutRequest(key=prefix + b"k", value=b"x"))
        assert await w.nothing_within(0.3)

    run(storage.address, test)


def test_filters_and_prev_kv(storage, prefix):
    async def test(s):
        key = prefix + b"k"
        w = WatchClient(s)
        no_put = await w.create(key=key, filters=[NOPUT], prev_kv=True)
        no_delete = await w.create(key=key, filters=[NODELETE])
        await s.kv.Put(pb.PutRequest(key=key, value=b"1"))
        await s.kv.Put(pb.PutRequest(key=key, value=b"2"))
        await s.kv.DeleteRange(pb.DeleteRangeRequest(key=key))
        got = await w.events(3)
        puts = [ev for wid, ev in got if wid == no_delete.watch_id]
        deletes = [ev for wid, ev in got if wid == no_put.watch_id]
        assert [(ev.type, ev.kv.value) for ev in puts] == [(PUT, b"1"), (PUT, b"2")]
        assert not puts[1].HasField("prev_kv")  # not asked for
        assert [ev.type for ev in deletes] == [DELETE]
        assert deletes[0].prev_kv.value == b"2" and deletes[0].kv.key == key
        assert deletes[0].kv.mod_revision > puts[1].kv.mod_revision and deletes[0].kv.version == 0

    run(storage.address, test)


def test_start_revision_in_the_past_and_future(storage, prefix):
    async def test(s):
        key = prefix + b"k"
        revs = [(await s.kv.Put(pb.PutRequest(key=key, value=b"%d" % i))).header.revision for i in range(3)]
        w = WatchClient(s)
        await w.create(key=key, start_revision=revs[1], prev_kv=True)
        got = await w.events(2)
        assert [ev.kv.mod_revision for _, ev in got] == revs[1:]
        assert got[0][1].prev_kv.value == b"0"
        future = revs[-1] + 3
        w2 = WatchClient(s)
        await w2.create(key=prefix, range_end=prefix_end(prefix), start_revision=future)
        for i in range(4):
            await s.kv.Put(pb.PutRequest(key=prefix + b"f", value=b"%d" % i))
        got = await w2.events(2)
        assert [ev.kv.mod_revision for _, ev in got] == [future, future + 1]
        assert await w2.nothing_within(0.2)

    run(storage.address, test)


def test_progress_request(storage, prefix):
    async def test(s):
        w = WatchClient(s)
        await w.create(key=prefix + b"k")
        put = await s.kv.Put(pb.PutRequest(key=prefix + b"k", value=b"v"))
        await w.call.write(pb.WatchRequest(progress_request=pb.WatchProgressRequest()))
        event = await w.read()
        assert event.events[0].kv.mod_revision == put.header.revision  # events first
        progress = await w.read()
        assert progress.watch_id == -1 and not progress.events and not progress.created
        assert progress.header.revision >= put.header.revision

    run(storage.address, test)


def test_progress_notify(storage, prefix):
    """The shared server sends progress notifications every second to idle watches."""

    async def test(s):
        w = WatchClient(s)
        created = await w.create(key=prefix + b"quiet", progress_notify=True)
        r = await w.read(timeout=5)
        assert r.watch_id == created.watch_id and not r.events and not r.canceled
        assert r.header.revision >= created.header.revision

    run(storage.address, test)


def test_compacted_start_revision(storage_factory):
    server = storage_factory("--compaction-retention", "0")

    async def test(s):
        revs = [(await s.kv.Put(pb.PutRequest(key=b"k", value=b"%d" % i))).header.revision for i in range(4)]
        await s.kv.Compact(pb.CompactionRequest(revision=revs[2]))
        w = WatchClient(s)
        created = await w.create(key=b"k", start_revision=revs[0])
        r = await w.read()
        assert r.canceled and r.compact_revision == revs[2] and r.watch_id == created.watch_id
        await w.create(key=b"k", start_revision=revs[2])  # the compacted revision itself is still readable
        got = await w.events(2)
        assert [ev.kv.mod_revision for _, ev in got] == revs[2:]

    run(server.address, test)


def test_catch_up_from_history_during_writes(storage_factory):
    """A tiny ring forces catch-up from SQLite; writes continue while it runs: no gap, no duplicate."""
    server = storage_factory("--compaction-retention", "0", "--watch-ring-size", "5")

    async def test(s):
        first = (await s.kv.Put(pb.PutRequest(key=b"/p/0", value=b"x"))).header.revision
        for i in range(1, 300):
            await s.kv.Put(pb.PutRequest(key=b"/p/%d" % (i % 7), value=b"x"))

        async def writer():
            for i in range(200):
                await s.kv.Put(pb.PutRequest(key=b"/p/w", value=b"%d" % i))

        w = WatchClient(s)
        task = asyncio.create_task(writer())
        await w.create(key=b"/p/", range_end=b"/p0", start_revision=first, prev_kv=True)
        got = await w.events(500)
        await task
        revs = [ev.kv.mod_revision for _, ev in got]
        assert revs == list(range(first, first + 500))
        last_rev: dict[bytes, int] = {}
        for _, ev in got:  # prev_kv is the key's previous version (none before the watch's start)
            if ev.kv.key in last_rev:
                assert ev.prev_kv.mod_revision == last_rev[ev.kv.key]
            last_rev[ev.kv.key] = ev.kv.mod_revision

    run(server.address, test, timeout=60)


def test_watch_sees_deletes_of_a_range(storage, prefix):
    async def test(s):
        for k in (b"a", b"b"):
            await s.kv.Put(pb.PutRequest(key=prefix + k))
        w = WatchClient(s)
        await w.create(key=prefix, range_end=prefix_end(prefix))
        deleted = await s.kv.DeleteRange(pb.DeleteRangeRequest(key=prefix, range_end=prefix_end(prefix)))
        r = await w.read()
        assert [(ev.type, ev.kv.key) for ev in r.events] == [(DELETE, prefix + b"a"), (DELETE, prefix + b"b")]
        assert {ev.kv.mod_revision for ev in r.events} == {deleted.header.revision}

    run(storage.address, test)


def test_invalid_watch_requests(storage, prefix):
    async def test(s):
        w = WatchClient(s)
        await w.call.write(
            pb.WatchRequest(create_request=pb.WatchCreateRequest(key=prefix + b"b", range_end=prefix + b"a"))
        )
        r = await w.read()
        assert r.created and r.canceled and r.cancel_reason
        ok = await w.create(key=prefix + b"x", watch_id=7)
        assert ok.watch_id == 7
        await w.call.write(pb.WatchRequest(create_request=pb.WatchCreateRequest(key=prefix + b"y", watch_id=7)))
        dup = await w.read()
        assert dup.canceled and "duplicate" in dup.cancel_reason

    run(storage.address, test)


def test_progress_waits_for_catch_up(storage_factory):
    """A progress response reports a revision only after the stream's watchers got all events up to it."""
    server = storage_factory("--compaction-retention", "0", "--watch-ring-size", "5")

    async def test(s):
        first = (await s.kv.Put(pb.PutRequest(key=b"/g/0", value=b"x"))).header.revision
        ops = [pb.RequestOp(request_put=pb.PutRequest(key=b"/g/%d" % i, value=b"x")) for i in range(100)]
        for _ in range(30):
            await s.kv.Txn(pb.TxnRequest(success=ops))
        w = WatchClient(s)
        await w.create(key=b"/g/", range_end=b"/g0", start_revision=first)
        await w.call.write(pb.WatchRequest(progress_request=pb.WatchProgressRequest()))
        seen = 0
        while True:
            r = await w.read()
            if r.watch_id == -1:
                assert r.header.revision == first + 30 and seen == 3001
                break
            seen += len(r.events)

    run(server.address, test, timeout=60)


def test_fragmented_responses(storage_factory):
    """A watch that allows fragments gets a response larger than the request limit in pieces."""
    server = storage_factory("--compaction-retention", "0", "--max-request-bytes", "100000")

    async def test(s):
        ops = [pb.RequestOp(request_put=pb.PutRequest(key=b"/f/%d" % i, value=b"x" * 18_000)) for i in range(5)]
        await s.kv.Txn(pb.TxnRequest(success=ops))
        whole, pieces = WatchClient(s), WatchClient(s)
        await whole.create(key=b"/f/", range_end=b"/f0", prev_kv=True)
        await pieces.create(key=b"/f/", range_end=b"/f0", prev_kv=True, fragment=True)
        await s.kv.Txn(pb.TxnRequest(success=ops))  # 5 events with prev_kv: ~180 kB in all
        assert len((await whole.read()).events) == 5
        responses = [await pieces.read()]
        while responses[-1].fragment:
            responses.append(await pieces.read())
        assert len(responses) > 1 and sum(len(r.events) for r in responses) == 5
        assert all(len(r.SerializeToString()) <= 100_000 for r in responses)

    run(server.address, test)


def _metric(server, name: str) -> float:
    """A value of the server's /metrics (it was started with --listen-metrics)."""
    url = next(line.split()[-1] for line in server.log if line.startswith("storage metrics on"))
    with urllib.request.urlopen(url, timeout=5) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    raise AssertionError(f"{name} not on {url}")


# For clients that stop reading: HTTP/2's initial window kept. With BDP probing on, grpc may grow it
# until the client's transport takes in every write and the stream is never full.
FIXED_WINDOW = [("grpc.http2.bdp_probe", 0)]


@pytest.mark.parametrize("ring", ["100000", "5"], ids=["from-the-ring", "from-sqlite"])
def test_a_client_that_stops_reading_is_paced(storage_factory, ring):
    """A watch whose client does not read stops queueing once its stream holds a buffer's worth
    (slow watcher), a fast watcher on another connection sees every event meanwhile, and the slow
    one, once it reads again, is caught up: every revision once, in order."""
    buffer = 256 * 1024
    server = storage_factory(
        *("--compaction-retention", "0", "--watch-ring-size", ring, "--listen-metrics", "127.0.0.1:0"),
        *("--watch-stream-buffer-bytes", str(buffer)),
    )
    value = b"v" * 32 * 1024
    writes = 400  # 12.5 MiB: fifty times the buffer

    async def test(s):
        async with grpc.aio.insecure_channel(server.address, options=FIXED_WINDOW) as other:
            slow, fast = WatchClient(Stubs(other)), WatchClient(s)
            start = (await s.kv.Put(pb.PutRequest(key=b"/s/start"))).header.revision + 1
            await slow.create(key=b"/s/", range_end=b"/s0", prev_kv=True)
            await fast.create(key=b"/s/", range_end=b"/s0")
            for i in range(writes):
                await s.kv.Put(pb.PutRequest(key=b"/s/%d" % (i % 10), value=value))
            assert [ev.kv.mod_revision for _, ev in await fast.events(writes)] == list(range(start, start + writes))
            assert _metric(server, "etcd_debugging_mvcc_slow_watcher_total") == 1
            assert _metric(server, "protokube_storage_watch_queued_bytes") <= buffer + 2 * len(value) + 1024
            got = await slow.events(writes)
            assert [ev.kv.mod_revision for _, ev in got] == list(range(start, start + writes))
            assert all(ev.prev_kv.value == value for _, ev in got[10:])
            assert await slow.nothing_within(0.3)
            assert _metric(server, "etcd_debugging_mvcc_slow_watcher_total") == 0
            fast.call.cancel()
            slow.call.cancel()
        # A client that never reads is paced, then leaves: its watcher and its catch-up go with it.
        async with grpc.aio.insecure_channel(server.address, options=FIXED_WINDOW) as third:
            stalled = WatchClient(Stubs(third))
            await stalled.create(key=b"/s/", range_end=b"/s0")
            for i in range(writes):
                await s.kv.Put(pb.PutRequest(key=b"/s/%d" % (i % 10), value=value))
            assert _metric(server, "protokube_storage_watch_catch_ups") == 1
        deadline = asyncio.get_running_loop().time() + 10
        while _metric(server, "protokube_storage_watch_catch_ups") or _metric(
            server, "etcd_debugging_mvcc_watcher_total"
        ):
            assert asyncio.get_running_loop().time() < deadline, "the paced watcher outlived its stream"
            await asyncio.sleep(0.1)

    run(server.address, test, timeout=60)


@pytest.mark.parametrize("prev_kv", [False, True], ids=["values", "with-prev-kv"])
def test_a_catch_up_from_the_history_comes_in_pages_of_a_quarter_buffer(storage_factory, prev_kv):
    """A watch from a revision the ring no longer holds, on a stream whose client does not read: the
    history is read a page at a time, each page about a quarter of the stream's buffer, so the
    stream never holds much more than its buffer (a page of 1000 revisions would be 31 MiB here)."""
    buffer = 256 * 1024
    server = storage_factory(
        *("--watch-ring-size", "5", "--listen-metrics", "127.0.0.1:0"),
        *("--watch-stream-buffer-bytes", str(buffer)),
    )
    value = b"v" * 32 * 1024

    async def test(s):
        start = (await s.kv.Put(pb.PutRequest(key=b"/h/start"))).header.revision + 1
        for i in range(500):
            await s.kv.Put(pb.PutRequest(key=b"/h/%d" % (i % 10), value=value))
        async with grpc.aio.insecure_channel(server.address, options=FIXED_WINDOW) as channel:
            stalled = WatchClient(Stubs(channel))
            await stalled.create(key=b"/h/", range_end=b"/h0", start_revision=start, prev_kv=prev_kv)
            # Paced: the stream filled, its writer drained what the client's window took, and the
            # catch-up waits for room; what is queued then holds still.
            deadline = asyncio.get_running_loop().time() + 10
            queued, before = -1.0, -2.0
            while queued != before or queued == 0:
                assert asyncio.get_running_loop().time() < deadline, "the catch-up never held still"
                before = queued
                await asyncio.sleep(0.3)
                queued = _metric(server, "protokube_storage_watch_queued_bytes")
            assert queued <= buffer + buffer // 4 + 2 * len(value) + 1024
            assert _metric(server, "protokube_storage_watch_catch_ups") == 1  # paced, not done
            got = await stalled.events(500)
            assert [ev.kv.mod_revision for _, ev in got] == list(range(start, start + 500))
            if prev_kv:
                assert all(ev.prev_kv.value == value for _, ev in got[10:])
            else:
                assert not any(ev.HasField("prev_kv") for _, ev in got)

    run(server.address, test, timeout=60)


def test_a_client_that_reads_slower_than_the_events_come_gets_them_merged(storage, prefix):
    """Event responses of one watch that wait behind each other (flow control holds the writes back
    while the client does not read) go out as one: fewer responses than revisions, every revision
    once and in order, each response's header at its last event or later; the watch's other
    responses (the progress answer) are never merged and keep their place."""
    writes, value = 300, b"v" * 2048  # 600 KiB: many times HTTP/2's initial window

    async def test(s):
        async with grpc.aio.insecure_channel(storage.address, options=FIXED_WINDOW) as other:
            slow = WatchClient(Stubs(other))
            created = await slow.create(key=prefix, range_end=prefix_end(prefix))
            revisions = [(await s.kv.Put(pb.PutRequest(key=prefix + b"k", value=value))).header.revision]
            revisions += [
                (await s.kv.Put(pb.PutRequest(key=prefix + b"%d" % i, value=value))).header.revision
                for i in range(writes - 1)
            ]
            await slow.call.write(pb.WatchRequest(progress_request=pb.WatchProgressRequest()))
            responses = []
            while sum(len(r.events) for r in responses) < writes:
                responses.append(await slow.read())
            progress = await slow.read()
            assert progress.watch_id == -1 and not progress.events and progress.header.revision == revisions[-1]
            assert {r.watch_id for r in responses} == {created.watch_id}
            assert [ev.kv.mod_revision for r in responses for ev in r.events] == revisions
            assert all(r.header.revision >= r.events[-1].kv.mod_revision for r in responses)
            assert len(responses) < writes // 2, len(responses)
            slow.call.cancel()

    run(storage.address, test, timeout=60)
