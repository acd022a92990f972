"""Test helpers: `protokube serve` as a real subprocess, an HTTP client for it, kubectl against it."""

from __future__ import annotations

import base64
import datetime
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from protokube.gen.etcdserverpb import rpc_pb2 as rpc
from protokube.gen.etcdserverpb import rpc_pb2_grpc as rpc_grpc

ROOT = Path(__file__).resolve().parents[2]
HTTP_SERVERS = ("native", "hypercorn")  # --http-server
START_TIMEOUT = 30.0
READY_TIMEOUT = 120.0  # from "serving on" to /readyz 200, while the process lives
# The controllers of the servers whose namespaces' lists must hold only what tests made: all but the
# root CA publisher (its kube-root-ca.crt would be in every namespace), as conftest.py explains.
NO_ROOT_CA_PUBLISHER = "--controllers=*,-root-ca-certificate-publisher-controller"
KUBECTL_CANDIDATES = ("/usr/lib/google-cloud-sdk/bin/kubectl.1.32", "/usr/bin/kubectl")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def until_cached(client: httpx.Client, path: str, revision: str) -> None:
    """Once this returns, the watch cache of the collection at ``path`` has seen ``revision``: a list
    at a resourceVersion, without a limit, is answered from the cache once it is not older than that
    (an "any" read, resourceVersion 0, may otherwise answer from a cache behind the last write; a
    most-recent list does not sync the cache where etcd is too old for progress notifications)."""
    client.get(path, params={"resourceVersion": revision}).raise_for_status()


def eventually(check: Callable[[], Any], timeout: float = 15.0) -> Any:
    """The first truthy answer of ``check`` within ``timeout`` seconds (the last answer otherwise)."""
    deadline = time.monotonic() + timeout
    while True:
        answer = check()
        if answer or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


def http_server(server: GatewayProcess) -> str:
    """The --http-server the gateway runs (native unless its arguments name another)."""
    args = list(server.args)
    return args[args.index("--http-server") + 1] if "--http-server" in args else "native"


def skip_on_hypercorn(server: GatewayProcess, lacking: str) -> None:
    """Skip a test of what hypercorn does not do (README, "HTTP servers")."""
    if http_server(server) == "hypercorn":
        pytest.skip(f"hypercorn: {lacking} (README, HTTP servers)")


class PortTaken(RuntimeError):
    """The gateway could not bind a port picked as free."""


class GatewayProcess:
    """`python -m protokube serve` with its own data directory: HTTPS on a free port, and plain HTTP
    (--insecure-listen, where requests act as system:masters) on another, which ``url`` names."""

    def __init__(
        self, data_dir: Path, *args: str, command: tuple[str, ...] = (sys.executable, "-m", "protokube")
    ) -> None:
        self.data_dir = data_dir
        self.args = args
        self.command = command
        self.port = 0  # the plain-HTTP port
        self.secure_port = 0
        self.storage = ""
        self.proc: subprocess.Popen[str] | None = None
        self.log: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def secure_url(self) -> str:
        return f"https://127.0.0.1:{self.secure_port}"

    @property
    def kubeconfig(self) -> Path:
        """The admin kubeconfig the server wrote (HTTPS, with its CA and an admin certificate)."""
        return self.data_dir / "kubeconfig"

    def start(self) -> GatewayProcess:
        """Start on two free ports; again on others when one was taken meanwhile (a free port is only
        free until someone else binds it: parallel tests, or this server's own storage listener)."""
        for _ in range(3):
            try:
                return self._start()
            except PortTaken:
                self.log.clear()
        return self._start()

    def _start(self) -> GatewayProcess:
        self.port, self.secure_port = free_port(), free_port()
        cmd = [
            *self.command,
            "serve",
            "--listen",
            f"127.0.0.1:{self.secure_port}",
            "--insecure-listen",
            f"127.0.0.1:{self.port}",
            "--data-dir",
            str(self.data_dir),
            *self.args,
        ]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        ready = threading.Event()

        def pump() -> None:
            assert self.proc is not None and self.proc.stdout is not None
            for line in self.proc.stdout:
                self.log.append(line)
                match = re.search(r"serving on \S+ \(storage (\S+)\)", line)
                if match:
                    self.storage = match.group(1)
                    ready.set()

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not ready.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                log = self._stopped_log(reader)
                if "Address already in use" in log:
                    raise PortTaken(log)
                raise RuntimeError("gateway did not start:\n" + log)
        # ready: watch caches synced, post-start hooks' objects made. A loaded machine (storage
        # fsyncing every bootstrap write) may take long: wait while the process lives, up to a ceiling.
        deadline = time.monotonic() + READY_TIMEOUT
        last = "no answer yet"
        with self.client() as client:
            while True:
                try:
                    answer = client.get("/readyz?verbose")
                    if answer.status_code == 200:
                        return self
                    last = f"{answer.status_code}: {answer.text}"
                except httpx.TransportError as err:
                    last = repr(err)
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
        log = self._stopped_log(reader)
        raise RuntimeError(f"gateway did not become ready within {READY_TIMEOUT:.0f} s; /readyz said {last}\n{log}")

    def _stopped_log(self, reader: threading.Thread) -> str:
        """The whole output of a process that failed to start, its exit status at the end."""
        running = self.proc is not None and self.proc.poll() is None
        self.kill()
        reader.join(5)  # the last lines (a traceback) are read before the log is shown
        code = self.proc.returncode if self.proc is not None else None
        return "".join(self.log) + ("(stopped by the test)" if running else f"(exited with status {code})")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30, **kwargs)

    def secure_client(self, *, token: str | None = None, cert: tuple[Path, Path] | None = None) -> httpx.Client:
        """A client of the HTTPS port: anonymous, with a bearer token, or with a client certificate."""
        context = ssl.create_default_context(cafile=self.data_dir / "pki" / "ca.crt")
        if cert is not None:
            context.load_cert_chain(*cert)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.secure_url, verify=context, timeout=30, headers=headers)

    def token_kubeconfig(self, path: Path, token: str | None) -> Path:
        """A kubeconfig for the HTTPS port with a bearer token (None: anonymous)."""
        ca = base64.b64encode((self.data_dir / "pki" / "ca.crt").read_bytes()).decode()
        user = {"token": token} if token else {}
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "current-context": "test",
                    "clusters": [
                        {"name": "test", "cluster": {"server": self.secure_url, "certificate-authority-data": ca}}
                    ],
                    "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
                    "users": [{"name": "test", "user": user}],
                }
            )
        )
        return path

    def storage_pid(self, timeout: float = 10) -> int:
        """The pid of the embedded storage child (``protokube storage``) of this serve; waits while
        the child is being started again."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for task in Path(f"/proc/{self.proc.pid}/task").glob("*"):
                try:
                    for child in (task / "children").read_text().split():
                        if b"storage" in Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0"):
                            return int(child)
                except FileNotFoundError:  # a thread or child that just ended
                    continue
            time.sleep(0.05)
        raise LookupError("no embedded storage child")


def kubectl_path() -> str | None:
    return next((p for p in KUBECTL_CANDIDATES if shutil.which(p)), None)


class Kubectl:
    """kubectl with a kubeconfig of its own, pointing at a test server."""

    def __init__(self, server_url: str, home: Path) -> None:
        path = kubectl_path()
        assert path is not None
        self.path = path
        home.mkdir(parents=True, exist_ok=True)
        self.kubeconfig = home / "kubeconfig"
        self.kubeconfig.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "current-context": "test",
                    "clusters": [{"name": "test", "cluster": {"server": server_url}}],
                    "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
                    "users": [{"name": "test", "user": {}}],
                }
            )
        )
        self.env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), "HOME": str(home)}

    def run(
        self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [self.path, *args], input=stdin, capture_output=True, text=True, env=self.env, timeout=timeout
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
        return result

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [self.path, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env
        )


def deployment(name: str, replicas: int = 2) -> dict:
    """A small Deployment manifest of nginx pods labelled app=<name>."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": name, "image": "nginx"}]},
            },
        },
    }


def watch_lines(client: httpx.Client, path: str, stop_after: int, timeout: float = 30, **params: Any) -> Iterator[dict]:
    """Stream a JSON watch and yield its events (at most ``stop_after``)."""
    params.setdefault("watch", "true")
    with client.stream("GET", path, params=params, timeout=timeout) as response:
        assert response.status_code == 200, response.read()
        count = 0
        for line in response.iter_lines():
            if not line:
                continue
            yield json.loads(line)
            count += 1
            if count >= stop_after:
                return


@contextmanager
def etcd_process(data_dir: Path, timeout: float = 30, *extra: str) -> Iterator[str]:
    """A single-member etcd on free loopback ports until it answers; its client address."""
    client, peer = free_port(), free_port()
    address = f"127.0.0.1:{client}"
    argv = [
        "etcd", "--name=test", f"--data-dir={data_dir}",
        f"--listen-client-urls=http://{address}", f"--advertise-client-urls=http://{address}",
        f"--listen-peer-urls=http://127.0.0.1:{peer}", f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
        f"--initial-cluster=test=http://127.0.0.1:{peer}", *extra,
    ]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with grpc.insecure_channel(address) as channel:
                    rpc_grpc.MaintenanceStub(channel).Status(rpc.StatusRequest(), timeout=1)
                break
            except grpc.RpcError:
                assert proc.poll() is None and time.monotonic() < deadline, "etcd did not start"
                time.sleep(0.2)
        yield address
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def store_copies(server: GatewayProcess, key: str, total: int) -> None:
    """``total`` objects in storage, cm-00000 … : the stored bytes of the first with its name changed
    (names of equal length keep every protobuf length prefix)."""
    with grpc.insecure_channel(server.storage) as channel:
        kv = rpc_grpc.KVStub(channel)
        value = kv.Range(rpc.RangeRequest(key=key.encode()), timeout=10).kvs[0].value
        for batch in range(1, total, 100):
            puts = []
            for i in range(batch, min(batch + 100, total)):
                name = f"cm-{i:05d}".encode()
                put = rpc.PutRequest(
                    key=key.replace("cm-00000", name.decode()).encode(), value=value.replace(b"cm-00000", name)
                )
                puts.append(rpc.RequestOp(request_put=put))
            kv.Txn(rpc.TxnRequest(success=puts), timeout=30)


CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def namespaced_crd(group: str, plural: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A namespaced CRD of ``group``, one served and stored version v1, whose objects' spec has the
    schema ``spec``."""
    kind = plural.capitalize()[:-1]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
                }
            ],
        },
    }


def install_crd(client: httpx.Client, body: dict[str, Any]) -> str:
    """Create the CRD, wait until it is served; its objects' path in namespace default."""
    made = client.post(CRDS, json=body)
    assert made.status_code == 201, made.text
    path = f"/apis/{body['spec']['group']}/v1/namespaces/default/{body['spec']['names']['plural']}"
    assert eventually(lambda: client.get(path).status_code == 200)
    return path


def self_signed_pem(name: x509.Name, key: ec.EllipticCurvePrivateKey, *, ca: bool = False) -> bytes:
    """A certificate of ``name`` signed by its own ``key``, valid for an hour; a CA (basic constraints,
    critical) when asked."""
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(hours=1))
    )
    if ca:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
