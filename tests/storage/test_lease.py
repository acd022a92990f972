"""Leases over gRPC: grant, keep-alive, time-to-live, list, revoke, expiry, restart."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from protokube.gen.etcdserverpb import rpc_pb2 as pb
from protokube.gen.mvccpb import kv_pb2

from .helpers import run


def test_grant_keepalive_ttl_list_revoke(storage, prefix):
    async def test(s):
        chosen = await s.lease.LeaseGrant(pb.LeaseGrantRequest(ID=0x7E57, TTL=30))
        assert chosen.ID == 0x7E57 and chosen.TTL == 30
        auto = await s.lease.LeaseGrant(pb.LeaseGrantRequest(TTL=1))
        assert auto.ID > 0 and auto.TTL == 2  # raised to the minimum TTL, as etcd
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await s.lease.LeaseGrant(pb.LeaseGrantRequest(ID=0x7E57, TTL=30))
        assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert info.value.details() == "etcdserver: lease already exists"

        for k in (b"a", b"b"):
            await s.kv.Put(pb.PutRequest(key=prefix + k, value=b"v", lease=chosen.ID))
        ttl = await s.lease.LeaseTimeToLive(pb.LeaseTimeToLiveRequest(ID=chosen.ID, keys=True))
        assert ttl.grantedTTL == 30 and 28 <= ttl.TTL <= 30 and list(ttl.keys) == [prefix + b"a", prefix + b"b"]

        call = s.lease.LeaseKeepAlive()
        await call.write(pb.LeaseKeepAliveRequest(ID=chosen.ID))
        alive = await asyncio.wait_for(call.read(), 5)
        assert alive.ID == chosen.ID and alive.TTL == 30 and alive.header.revision > 0
        await call.write(pb.LeaseKeepAliveRequest(ID=424242))
        assert (await asyncio.wait_for(call.read(), 5)).TTL == 0  # unknown lease: TTL 0, no error
        await call.done_writing()

        leases = {status.ID for status in (await s.lease.LeaseLeases(pb.LeaseLeasesRequest())).leases}
        assert {chosen.ID, auto.ID} <= leases

        before = (await s.kv.Range(pb.RangeRequest(key=prefix + b"a"))).header.revision
        revoked = await s.lease.LeaseRevoke(pb.LeaseRevokeRequest(ID=chosen.ID))
        assert revoked.header.revision == before + 1  # both keys deleted in one revision
        assert not (await s.kv.Range(pb.RangeRequest(key=prefix + b"a"))).kvs
        gone = await s.lease.LeaseTimeToLive(pb.LeaseTimeToLiveRequest(ID=chosen.ID))
        assert gone.TTL == -1
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await s.lease.LeaseRevoke(pb.LeaseRevokeRequest(ID=chosen.ID))
        assert info.value.code() == grpc.StatusCode.NOT_FOUND
        assert info.value.details() == "etcdserver: requested lease not found"

    run(storage.address, test)


def test_expired_lease_deletes_keys_with_delete_events(storage, prefix):
    async def test(s):
        lease = await s.lease.LeaseGrant(pb.LeaseGrantRequest(TTL=2))
        keys = [prefix + b"x", prefix + b"y"]
        for key in keys:
            await s.kv.Put(pb.PutRequest(key=key, value=b"v", lease=lease.ID))
        call = s.watch.Watch()
        end = prefix[:-1] + bytes([prefix[-1] + 1])
        await call.write(pb.WatchRequest(create_request=pb.WatchCreateRequest(key=prefix, range_end=end)))
        assert (await asyncio.wait_for(call.read(), 5)).created
        r = await asyncio.wait_for(call.read(), 6)  # expiry after ~2 s, checked every 0.5 s
        assert [(ev.type, ev.kv.key) for ev in r.events] == [(kv_pb2.Event.DELETE, k) for k in keys]
        assert len({ev.kv.mod_revision for ev in r.events}) == 1
        assert not (await s.kv.Range(pb.RangeRequest(key=prefix, range_end=end))).kvs
        assert (await s.lease.LeaseTimeToLive(pb.LeaseTimeToLiveRequest(ID=lease.ID))).TTL == -1

    run(storage.address, test, timeout=20)


def test_leases_survive_restart(storage_factory, tmp_path):
    data = tmp_path / "leases"
    server = storage_factory("--compaction-retention", "0", data_dir=data)

    async def before(s):
        lease = await s.lease.LeaseGrant(pb.LeaseGrantRequest(TTL=100))
        await s.kv.Put(pb.PutRequest(key=b"held", value=b"v", lease=lease.ID))
        return lease.ID

    lease_id = run(server.address, before)
    assert server.terminate() == 0
    server = storage_factory("--compaction-retention", "0", data_dir=data)

    async def after(s):
        ttl = await s.lease.LeaseTimeToLive(pb.LeaseTimeToLiveRequest(ID=lease_id, keys=True))
        assert ttl.grantedTTL == 100 and ttl.TTL >= 98 and list(ttl.keys) == [b"held"]
        assert (await s.kv.Range(pb.RangeRequest(key=b"held"))).kvs[0].lease == lease_id

    run(server.address, after)
