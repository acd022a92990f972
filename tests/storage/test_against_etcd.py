"""Differential test: the same requests to our service and to a real etcd must get the same
answers (responses with ids normalised, or the same error code and message)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator

import grpc
import pytest

from protokube.gen.etcdserverpb import rpc_pb2 as pb

from .helpers import free_port, run

ETCD = shutil.which("etcd")
pytestmark = pytest.mark.skipif(ETCD is None, reason="etcd not installed (Debian package etcd-server)")


@pytest.fixture(scope="module")
def real_etcd(tmp_path_factory) -> Iterator[str]:
    client, peer = free_port(), free_port()
    address = f"127.0.0.1:{client}"
    argv = [
        ETCD,
        "--name=diff",
        f"--data-dir={tmp_path_factory.mktemp('etcd')}",
        f"--listen-client-urls=http://{address}",
        f"--advertise-client-urls=http://{address}",
        f"--listen-peer-urls=http://127.0.0.1:{peer}",
        f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
        f"--initial-cluster=diff=http://127.0.0.1:{peer}",
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                run(address, lambda s: s.maintenance.Status(pb.StatusRequest(), timeout=1), timeout=3)
                break
            except (grpc.RpcError, TimeoutError):
                assert proc.poll() is None and time.monotonic() < deadline, "etcd did not start"
                time.sleep(0.2)
        yield address
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def normalise(message) -> str:
    """Text form without what legitimately differs: cluster/member ids, raft term, lease ids."""
    if message.HasField("header"):
        for name in ("cluster_id", "member_id", "raft_term"):
            message.header.ClearField(name)
    if hasattr(message, "ID") and message.ID > 1_000_000:
        message.ID = 1  # a server-assigned lease id
    return " ".join(str(message).split())


async def scenario(s) -> list[tuple[str, str]]:
    """Requests whose exact answers matter to clients; returns (step, normalised answer)."""
    out: list[tuple[str, str]] = []

    async def step(name: str, call) -> None:
        try:
            out.append((name, normalise(await call)))
        except grpc.aio.AioRpcError as exc:
            out.append((name, f"error {exc.code().name}: {exc.details()}"))

    kv, lease = s.kv, s.lease
    for i in range(3):
        await step(f"put{i}", kv.Put(pb.PutRequest(key=b"k%d" % i, value=b"v%d" % i, prev_kv=True)))
    await step("put-prev", kv.Put(pb.PutRequest(key=b"k0", value=b"again", prev_kv=True)))
    await step("put-ignore-missing", kv.Put(pb.PutRequest(key=b"nope", ignore_value=True)))
    await step("put-value-and-ignore", kv.Put(pb.PutRequest(key=b"k0", value=b"x", ignore_value=True)))
    await step("put-unknown-lease", kv.Put(pb.PutRequest(key=b"k0", lease=5)))
    await step("put-empty-key", kv.Put(pb.PutRequest(value=b"x")))
    await step("del-none", kv.DeleteRange(pb.DeleteRangeRequest(key=b"zz")))
    await step("range-all", kv.Range(pb.RangeRequest(key=b"\x00", range_end=b"\x00")))
    await step("range-from", kv.Range(pb.RangeRequest(key=b"k1", range_end=b"\x00", keys_only=True)))
    await step("range-mod", kv.Range(pb.RangeRequest(key=b"k", range_end=b"l", sort_target=3, keys_only=True)))
    await step("range-value-desc", kv.Range(pb.RangeRequest(key=b"k", range_end=b"l", sort_order=2, sort_target=4)))
    await step("range-filter", kv.Range(pb.RangeRequest(key=b"k", range_end=b"l", min_mod_revision=3, limit=1)))
    await step("range-limit-desc", kv.Range(pb.RangeRequest(key=b"k", range_end=b"l", sort_order=2, limit=2)))
    await step("range-count", kv.Range(pb.RangeRequest(key=b"k", range_end=b"l", count_only=True, limit=1)))
    await step("range-past", kv.Range(pb.RangeRequest(key=b"k0", revision=2)))
    await step("range-future", kv.Range(pb.RangeRequest(key=b"k0", revision=100)))
    await step("range-empty-key", kv.Range(pb.RangeRequest()))
    write_txn = pb.TxnRequest(
        compare=[pb.Compare(key=b"k1", target=pb.Compare.VERSION, result=pb.Compare.EQUAL, version=1)],
        success=[
            pb.RequestOp(request_put=pb.PutRequest(key=b"t", value=b"1", prev_kv=True)),
            pb.RequestOp(request_range=pb.RangeRequest(key=b"k0")),
            pb.RequestOp(request_delete_range=pb.DeleteRangeRequest(key=b"k2", prev_kv=True)),
            pb.RequestOp(
                request_txn=pb.TxnRequest(
                    compare=[pb.Compare(key=b"nope", target=pb.Compare.VALUE, value=b"")],
                    failure=[pb.RequestOp(request_put=pb.PutRequest(key=b"n", value=b"2"))],
                )
            ),
        ],
    )
    await step("txn", kv.Txn(write_txn))
    await step("txn-again", kv.Txn(write_txn))
    await step("txn-read", kv.Txn(pb.TxnRequest(success=[pb.RequestOp(request_range=pb.RangeRequest(key=b"t"))])))
    await step(
        "txn-noop-del",
        kv.Txn(pb.TxnRequest(success=[pb.RequestOp(request_delete_range=pb.DeleteRangeRequest(key=b"x"))])),
    )
    duplicate = [pb.RequestOp(request_put=pb.PutRequest(key=b"d"))] * 2
    await step("txn-duplicate", kv.Txn(pb.TxnRequest(success=duplicate)))
    await step("txn-empty-key", kv.Txn(pb.TxnRequest(success=[pb.RequestOp(request_put=pb.PutRequest())])))
    await step("ttl-unknown", lease.LeaseTimeToLive(pb.LeaseTimeToLiveRequest(ID=99)))
    await step("revoke-unknown", lease.LeaseRevoke(pb.LeaseRevokeRequest(ID=99)))
    await step("grant-small", lease.LeaseGrant(pb.LeaseGrantRequest(TTL=1)))
    await step("grant-id", lease.LeaseGrant(pb.LeaseGrantRequest(TTL=0, ID=77)))
    await step("grant-id-again", lease.LeaseGrant(pb.LeaseGrantRequest(TTL=5, ID=77)))
    await step("grant-huge", lease.LeaseGrant(pb.LeaseGrantRequest(TTL=10**12)))
    await step("put-leased", kv.Put(pb.PutRequest(key=b"leased", value=b"v", lease=77)))
    await step("ttl-keys", lease.LeaseTimeToLive(pb.LeaseTimeToLiveRequest(ID=77, keys=True)))
    await step("revoke", lease.LeaseRevoke(pb.LeaseRevokeRequest(ID=77)))
    await step("compact-0", kv.Compact(pb.CompactionRequest(revision=0)))
    await step("compact-future", kv.Compact(pb.CompactionRequest(revision=1000)))
    await step("compact", kv.Compact(pb.CompactionRequest(revision=4)))
    await step("compact-same", kv.Compact(pb.CompactionRequest(revision=4)))
    await step("range-compacted", kv.Range(pb.RangeRequest(key=b"k0", revision=3)))
    await step("range-at-compaction", kv.Range(pb.RangeRequest(key=b"k0", revision=4)))

    call = s.watch.Watch()

    async def watch(name: str, request: pb.WatchRequest | None, responses: int = 1) -> None:
        if request is not None:
            await call.write(request)
        for i in range(responses):
            out.append((f"{name}.{i}", normalise(await asyncio.wait_for(call.read(), 5))))

    def create(**kw) -> pb.WatchRequest:
        return pb.WatchRequest(create_request=pb.WatchCreateRequest(**kw))

    await watch("w-empty-range", create(key=b"b", range_end=b"a"))
    await watch("w-chosen-id", create(key=b"x", watch_id=5))
    await watch("w-duplicate-id", create(key=b"x", watch_id=5))
    await watch("w-auto-id", create(key=b"k", range_end=b"l", prev_kv=True, filters=[pb.WatchCreateRequest.NODELETE]))
    await watch("w-history", create(key=b"k0", start_revision=4, prev_kv=True), 2)
    await watch("w-compacted", create(key=b"k0", start_revision=2), 2)
    await kv.Put(pb.PutRequest(key=b"k1", value=b"watched"))
    await kv.DeleteRange(pb.DeleteRangeRequest(key=b"k", range_end=b"l"))
    await kv.Put(pb.PutRequest(key=b"k0", value=b"back"))
    await watch("w-live", None, 4)  # responses of different watches may come in either order
    await watch("w-cancel", pb.WatchRequest(cancel_request=pb.WatchCancelRequest(watch_id=5)))
    await call.write(pb.WatchRequest(cancel_request=pb.WatchCancelRequest(watch_id=55)))  # unknown: ignored
    await watch("w-progress", pb.WatchRequest(progress_request=pb.WatchProgressRequest()))
    call.cancel()
    return out


def unordered_live_events(steps: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Responses to different watches of one revision have no set order: sort that group."""
    live = sorted(answer for name, answer in steps if name.startswith("w-live."))
    others = [(name, answer) for name, answer in steps if not name.startswith("w-live.")]
    return others + [(f"w-live.{i}", answer) for i, answer in enumerate(live)]


def test_same_answers_as_etcd(real_etcd, storage_factory):
    ours = run(storage_factory("--compaction-retention", "0").address, scenario)
    theirs = run(real_etcd, scenario)
    assert [name for name, _ in ours] == [name for name, _ in theirs]
    ours, theirs = unordered_live_events(ours), unordered_live_events(theirs)
    differences = [
        f"{name}:\n  ours: {a}\n  etcd: {b}" for (name, a), (_, b) in zip(ours, theirs, strict=True) if a != b
    ]
    assert not differences, "\n".join(differences)
