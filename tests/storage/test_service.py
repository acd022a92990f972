"""The service as a whole: Maintenance.Status, auto-compaction, CLI start and clean stop."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys

import grpc

from protokube.gen.etcdserverpb import rpc_pb2 as pb

from .helpers import ROOT, run


def test_status(storage):
    async def test(s):
        put = await s.kv.Put(pb.PutRequest(key=b"/status/k", value=b"v"))
        status = await s.maintenance.Status(pb.StatusRequest())
        assert status.version == "3.5.17"
        assert status.dbSize > 0 and 0 < status.dbSizeInUse <= status.dbSize
        assert status.leader == status.header.member_id == put.header.member_id
        assert status.header.cluster_id == put.header.cluster_id
        assert status.raftIndex == status.raftAppliedIndex == status.header.revision >= put.header.revision
        assert status.raftTerm == 1
        assert not (await s.maintenance.Alarm(pb.AlarmRequest())).alarms
        defrag = await s.maintenance.Defragment(pb.DefragmentRequest())
        assert defrag.header.revision >= put.header.revision
        assert (await s.kv.Range(pb.RangeRequest(key=b"/status/k"))).kvs[0].value == b"v"

    run(storage.address, test)


def test_ids_persist_across_restart(storage_factory, tmp_path):
    data = tmp_path / "ids"
    server = storage_factory("--compaction-retention", "0", data_dir=data)

    async def header(s):
        return (await s.maintenance.Status(pb.StatusRequest())).header

    first = run(server.address, header)
    assert server.terminate() == 0
    second = run(storage_factory("--compaction-retention", "0", data_dir=data).address, header)
    assert (first.cluster_id, first.member_id) == (second.cluster_id, second.member_id)


def test_periodic_auto_compaction(storage_factory):
    server = storage_factory("--compaction-retention", "1")

    async def test(s):
        old = await s.kv.Put(pb.PutRequest(key=b"k", value=b"old"))
        await s.kv.Put(pb.PutRequest(key=b"k", value=b"new"))
        deadline = asyncio.get_running_loop().time() + 10
        while True:
            try:
                await s.kv.Range(pb.RangeRequest(key=b"k", revision=old.header.revision))
            except grpc.aio.AioRpcError as exc:
                assert exc.code() == grpc.StatusCode.OUT_OF_RANGE
                assert exc.details() == "etcdserver: mvcc: required revision has been compacted"
                break
            assert asyncio.get_running_loop().time() < deadline, "history older than 1 s was never compacted"
            await asyncio.sleep(0.2)
        assert (await s.kv.Range(pb.RangeRequest(key=b"k"))).kvs[0].value == b"new"

    run(server.address, test)


def test_sigterm_stops_cleanly(storage_factory):
    server = storage_factory("--compaction-retention", "0")
    assert server.terminate() == 0


def test_cli_rejects_bad_listen_address(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "protokube", "storage", "--listen", "nowhere", "--data-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0 and "HOST:PORT" in done.stderr


def test_cli_reports_a_busy_port(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        listen = f"127.0.0.1:{busy.getsockname()[1]}"
        argv = [sys.executable, "-m", "protokube", "storage", "--listen", listen, "--data-dir", str(tmp_path)]
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "cannot listen" in done.stderr and "Traceback" not in done.stderr


def test_cli_help():
    argv = [sys.executable, "-m", "protokube", "storage", "--help"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0
    for option in (
        "--listen",
        "--data-dir",
        "--compaction-retention",
        "--max-request-bytes",
        "--no-group-commit",
    ):
        assert option in done.stdout


def test_metrics_on_their_own_port(storage_factory, tmp_path):
    """etcd-style metrics (gRPC calls by method and code, commit latency, keys, size) on /metrics."""
    import re
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    server = storage_factory("--listen-metrics", "127.0.0.1:0", data_dir=tmp_path / "metrics")
    address = next(m.group(1) for line in server.log if (m := re.search(r"metrics on http://(\S+)/metrics", line)))

    async def writes(s):
        await s.kv.Put(pb.PutRequest(key=b"/m/a", value=b"1"))
        await s.kv.Range(pb.RangeRequest(key=b"/m/a"))
        try:
            await s.kv.Range(pb.RangeRequest(key=b""))
        except grpc.aio.AioRpcError as err:
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT

    run(server.address, writes)
    text = urllib.request.urlopen(f"http://{address}/metrics", timeout=10).read().decode()
    samples = [s for family in text_string_to_metric_families(text) for s in family.samples]

    def value(name: str, **labels: str) -> float:
        return sum(s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()))

    assert value("grpc_server_handled_total", grpc_service="etcdserverpb.KV", grpc_method="Range", grpc_code="OK") >= 1
    assert value("grpc_server_handled_total", grpc_method="Range", grpc_code="InvalidArgument") == 1
    assert value("grpc_server_started_total", grpc_method="Put", grpc_type="unary") == 1
    assert value("etcd_disk_backend_commit_duration_seconds_count") >= 1
    assert value("etcd_debugging_mvcc_keys_total") == 1
    assert value("etcd_mvcc_db_total_size_in_bytes") > 0 and value("etcd_server_has_leader") == 1
