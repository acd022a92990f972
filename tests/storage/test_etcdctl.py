"""The real etcdctl (v3 API) against our service: the commands people and scripts use."""

from __future__ import annotations

import base64
import json
import os
import selectors
import shutil
import signal
import subprocess
import time

import pytest

ETCDCTL = shutil.which("etcdctl")
pytestmark = pytest.mark.skipif(ETCDCTL is None, reason="etcdctl not installed (Debian package etcd-client)")


class Etcdctl:
    def __init__(self, address: str) -> None:
        self.address = address
        self.env = {**os.environ, "ETCDCTL_API": "3"}

    def argv(self, *args: str) -> list[str]:
        return [ETCDCTL, f"--endpoints={self.address}", "--dial-timeout=3s", "--command-timeout=5s", *args]

    def __call__(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        done = subprocess.run(self.argv(*args), input=stdin, capture_output=True, text=True, env=self.env, timeout=20)
        if check and done.returncode != 0:
            raise AssertionError(f"etcdctl {' '.join(args)} failed: {done.stderr}")
        return done.stdout if check else done.stdout + done.stderr

    def json(self, *args: str) -> dict:
        return json.loads(self("-w", "json", *args))


def b64(data: str) -> str:
    return base64.b64encode(data.encode()).decode()


def unb64(data: str) -> str:
    return base64.b64decode(data).decode()


@pytest.fixture
def ctl(storage) -> Etcdctl:
    return Etcdctl(storage.address)


@pytest.fixture
def p(prefix) -> str:
    return prefix.decode()


def test_put_get(ctl, p):
    assert ctl("put", p + "a", "1").strip() == "OK"
    first = ctl.json("put", p + "b", "2")["header"]["revision"]
    ctl("put", p + "c", "3")
    ctl("put", p + "a", "one")
    assert ctl("get", p + "a").split() == [p + "a", "one"]
    assert ctl("get", "--prefix", p).split() == [p + "a", "one", p + "b", "2", p + "c", "3"]
    assert ctl("get", "--prefix", "--keys-only", p).split() == [p + "a", p + "b", p + "c"]
    assert ctl("get", "--prefix", "--limit=2", p).split() == [p + "a", "one", p + "b", "2"]
    out = ctl.json("get", "--prefix", "--limit=1", p)
    assert out["count"] == 3 and out["more"] is True and len(out["kvs"]) == 1
    old = ctl.json("get", f"--rev={first}", p + "a")
    assert unb64(old["kvs"][0]["value"]) == "1"
    desc = ctl("get", "--prefix", "--sort-by=KEY", "--order=DESCEND", "--keys-only", p).split()
    assert desc == [p + "c", p + "b", p + "a"]
    by_value = ctl("get", "--prefix", "--sort-by=VALUE", "--order=ASCEND", "--keys-only", p).split()
    assert by_value == [p + "b", p + "c", p + "a"]  # "2" < "3" < "one"
    if "--count-only" in ctl("get", "--help", check=False):  # etcdctl >= 3.5
        assert ctl.json("get", "--prefix", "--count-only", p)["count"] == 3


def test_del(ctl, p):
    for k in ("a", "b", "c"):
        ctl("put", p + k, k)
    assert ctl("del", p + "a").strip() == "1"
    out = ctl("del", "--prefix", "--prev-kv", p).split()
    assert out == ["2", p + "b", "b", p + "c", "c"]
    assert ctl("get", "--prefix", p).strip() == ""


def test_txn_from_stdin(ctl, p):
    ctl("put", p + "k", "v1")
    script = f'value("{p}k") = "v1"\n\nput {p}k v2\nput {p}other x\n\nput {p}k failed\n\n'
    out = ctl("txn", stdin=script).split()
    assert out == ["SUCCESS", "OK", "OK"]
    assert ctl("get", p + "k").split() == [p + "k", "v2"]
    out = ctl("txn", stdin=script).split()
    assert out[0] == "FAILURE"
    assert ctl("get", p + "k").split() == [p + "k", "failed"]
    out = ctl("txn", stdin=f'mod("{p}k") > "0"\n\nget {p}k\n\n\n').split()
    assert out == ["SUCCESS", p + "k", "failed"]


def test_watch(ctl, p):
    start = ctl.json("put", p + "w", "0")["header"]["revision"]
    ctl("put", p + "w", "1")
    proc = subprocess.Popen(
        ctl.argv("watch", "--prefix", p, f"--rev={start}", "--prev-kv"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=ctl.env,
        start_new_session=True,
    )
    k = p + "w"
    # each event: type, [prev key, prev value,] key, value, a line each -- in revision order, from --rev on
    expected = ["PUT", k, "0"]
    expected += ["PUT", k, "0", k, "1"]
    expected += ["PUT", k, "1", k, "2"]
    expected += ["DELETE", k, "2", k]
    printed = b""
    try:
        ctl("put", p + "w", "2")  # whenever the watch starts, it begins at --rev
        ctl("del", p + "w")
        assert proc.stdout is not None
        with selectors.DefaultSelector() as ready:  # read until it printed them all, however slowly
            ready.register(proc.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + 30
            while printed.count(b"\n") < len(expected) and ready.select(max(0.0, deadline - time.monotonic())):
                printed += os.read(proc.stdout.fileno(), 65536)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        rest, _ = proc.communicate(timeout=10)
    assert (printed + rest).decode().split() == expected


def test_compaction(ctl, p):
    old = ctl.json("put", p + "c", "old")["header"]["revision"]
    now = ctl.json("put", p + "c", "new")["header"]["revision"]
    assert ctl("compaction", str(now)).strip() == f"compacted revision {now}"
    out = ctl("get", f"--rev={old}", p + "c", check=False)
    assert "required revision has been compacted" in out
    assert ctl("get", p + "c").split() == [p + "c", "new"]


def test_lease_commands(ctl, p):
    out = ctl("lease", "grant", "60").split()  # lease <hex id> granted with TTL(60s)
    assert out[0] == "lease" and out[3:] == ["with", "TTL(60s)"]
    lease = out[1]
    ctl("put", "--lease=" + lease, p + "leased", "v")
    assert ctl("lease", "keep-alive", "--once", lease).strip() == f"lease {lease} keepalived with TTL(60)"
    ttl = ctl("lease", "timetolive", "--keys", lease)
    assert f"lease {lease} granted with TTL(60s)" in ttl and f"attached keys([{p}leased])" in ttl
    assert lease in ctl("lease", "list")
    assert ctl("lease", "revoke", lease).strip() == f"lease {lease} revoked"
    assert ctl("get", p + "leased").strip() == ""
    assert "already expired" in ctl("lease", "timetolive", lease)


def test_endpoint_status(ctl):
    status = ctl.json("endpoint", "status")[0]["Status"]
    assert status["version"] == "3.5.17"
    assert status["dbSize"] > 0
    assert status["leader"] == status["header"]["member_id"]
    assert status["raftIndex"] == status["header"]["revision"]
    assert "is healthy" in ctl("endpoint", "health", check=False)


def test_quota_and_the_nospace_alarm(storage_factory):
    """etcd's --quota-backend-bytes, as etcd 3.4 answers it (seen with Debian's etcd): a put that does
    not fit fails and raises NOSPACE; then every put fails, reads and deletes go on; after compaction,
    defragmentation and `alarm disarm`, puts work again."""
    server = storage_factory("--quota-backend-bytes", "1000000", "--compaction-retention", "0")
    ctl = Etcdctl(server.address)
    value = "x" * 100_000
    failed = None
    for i in range(40):
        out = ctl("put", f"/q/{i}", value, check=False)
        if "database space exceeded" in out:
            failed = i
            break
    assert failed is not None and 3 < failed < 20, failed
    assert "Error: etcdserver: mvcc: database space exceeded" in out
    member = ctl.json("endpoint", "status")[0]["Status"]["header"]["member_id"]
    assert ctl("alarm", "list") == f"memberID:{member} alarm:NOSPACE \n"
    server, ctl = restarted(storage_factory, server)
    assert ctl("alarm", "list") == f"memberID:{member} alarm:NOSPACE \n"  # it outlives a restart, as etcd's
    assert len(ctl("get", "/q/0", "--print-value-only").strip()) == 100_000  # reads go on
    assert "database space exceeded" in ctl("put", "/q/small", "v", check=False)  # even a small put
    assert ctl("del", "--prefix", "/q/").strip() == str(failed)  # deletes go on
    revision = ctl.json("get", "/q/", "--prefix")["header"]["revision"]
    ctl("compact", str(revision))
    ctl("defrag")
    assert "database space exceeded" in ctl("put", "/q/small", "v", check=False)  # still armed
    assert ctl("alarm", "disarm") == f"memberID:{member} alarm:NOSPACE \n"
    assert ctl("alarm", "list") == ""
    assert ctl("put", "/q/small", "v").strip() == "OK"
    _, ctl = restarted(storage_factory, server)
    assert ctl("alarm", "list") == ""  # disarmed for good


def restarted(storage_factory, server):
    """The server stopped and started again on its data dir, with its flags."""
    assert server.terminate() == 0
    again = storage_factory(*server.args, data_dir=server.data_dir)
    return again, Etcdctl(again.address)
