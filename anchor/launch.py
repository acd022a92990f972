"""kube-apiserver (built by anchor/build.sh) with Debian's etcd, on free 127.0.0.1 ports in a temporary
directory: protokube's certificate set (CA, serving, admin in system:masters), a service-account key
pair, the flags a minimal control plane needs, an admin kubeconfig once /readyz answers 200.

``python -m anchor.launch`` starts it, runs ``kubectl get ns`` with that kubeconfig and stops it
(make anchor's smoke check); ``--keep`` leaves it running until interrupted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from bench.common import cpu_seconds, free_port
from protokube.gateway.security import certs, kubeconfig

ROOT = Path(__file__).resolve().parents[1]
BINARY = ROOT / ".cache" / "anchor" / "kube-apiserver"
# etcd v3.6 built by anchor/build.sh; Debian's 3.4.23 when it is missing (kube-apiserver then reads
# consistently from etcd, not its cache, and refuses watch lists: it needs RequestWatchProgress).
ETCD = ROOT / ".cache" / "anchor" / "etcd"
START_TIMEOUT = 120.0
# The same service range and issuer protokube serve uses by default, so both servers' defaults agree.
SERVICE_CIDR = "10.96.0.0/12"
ISSUER = "https://kubernetes.default.svc.cluster.local"


@dataclass(frozen=True, slots=True)
class Anchor:
    """A running kube-apiserver: its URL, TLS material, kubeconfig and process ids."""

    url: str
    pki: certs.TLSFiles
    kubeconfig: Path
    apiserver_pid: int
    etcd_pid: int
    etcd_url: str

    def client(self, **kwargs: Any) -> httpx.Client:
        """An HTTPS client authenticated as the admin (system:masters)."""
        return admin_client(self.url, self.pki, **kwargs)


def admin_client(url: str, pki: certs.TLSFiles, **kwargs: Any) -> httpx.Client:
    """An httpx client of ``url`` trusting ``pki``'s CA, presenting its admin certificate."""
    context = ssl.create_default_context(cafile=pki.ca.cert)
    context.load_cert_chain(pki.admin.cert, pki.admin.key)
    return httpx.Client(base_url=url, verify=context, timeout=60, **kwargs)


@dataclass(frozen=True, slots=True)
class Server:
    """A server under load: its URL, TLS files and the pids whose CPU is its cost."""

    label: str
    url: str
    pki: certs.TLSFiles
    pids: dict[str, int]

    def client(self) -> httpx.Client:
        return admin_client(self.url, self.pki)

    def cpu(self) -> dict[str, float]:
        return {name: cpu_seconds(pid) for name, pid in self.pids.items()}

    def address(self) -> tuple[str, int]:
        host, port = self.url.removeprefix("https://").split(":")
        return host, int(port)

    def tls_files(self) -> dict[str, str]:
        """The CA and admin certificate files, as bench.loadgen's ``tls`` takes them."""
        return {"ca": str(self.pki.ca.cert), "cert": str(self.pki.admin.cert), "key": str(self.pki.admin.key)}


def _service_account_keys(directory: Path) -> tuple[Path, Path]:
    """An ECDSA P-256 key pair for signing service-account tokens: (private key, public key)."""
    key = ec.generate_private_key(ec.SECP256R1())
    private, public = directory / "sa.key", directory / "sa.pub"
    certs.write_private(private, certs.key_pem(key))
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


@contextmanager
def _process(argv: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A child in a session of its own, its output in ``log``; SIGTERM (then SIGKILL) on exit."""
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)


def _wait(ready: Callable[[], bool], proc: subprocess.Popen[bytes], log: Path, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not become ready; its log:\n{log.read_text(errors='replace')[-4000:]}")
        time.sleep(0.2)


def _answers(url: str, path: str, **kwargs: Any) -> bool:
    try:
        return httpx.get(url + path, timeout=2, **kwargs).status_code == 200
    except httpx.HTTPError:
        return False


def etcd_binary(binary: str | None = None) -> str:
    """``binary``, else anchor/build.sh's etcd, else Debian's."""
    found = binary or (str(ETCD) if ETCD.exists() else shutil.which("etcd"))
    if found is None:
        raise RuntimeError("no etcd: run anchor/build.sh or install Debian's etcd-server (make debs)")
    return found


def etcd_version(binary: str | None = None) -> str:
    """The version ``etcd --version`` prints of etcd_binary(``binary``)."""
    argv = [etcd_binary(binary), "--version"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True).stdout.split()[2]


@contextmanager
def etcd(directory: Path, binary: str | None = None) -> Iterator[tuple[str, int]]:
    """etcd (``binary``, else anchor/build.sh's, else Debian's) on two free ports, its data under
    ``directory``: (client URL, pid)."""
    etcd_bin = etcd_binary(binary)
    directory.mkdir(parents=True, exist_ok=True)
    client, peer = f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"
    argv = [etcd_bin, "--name=anchor", f"--data-dir={directory / 'etcd'}", f"--listen-client-urls={client}"]
    argv += [f"--advertise-client-urls={client}", f"--listen-peer-urls={peer}"]
    argv += [f"--initial-advertise-peer-urls={peer}", f"--initial-cluster=anchor={peer}", "--log-level=warn"]
    log = directory / "etcd.log"
    with _process(argv, log) as proc:
        _wait(lambda: _answers(client, "/health"), proc, log, "etcd")
        yield client, proc.pid


def apiserver_argv(port: int, etcd_url: str, pki: certs.TLSFiles, sa_key: Path, sa_pub: Path) -> list[str]:
    """kube-apiserver's flags: TLS with protokube's certificates, RBAC, default admission and APF;
    privileged containers allowed, as kubeadm's clusters run it (protokube has no --allow-privileged)."""
    return [
        str(BINARY),
        f"--etcd-servers={etcd_url}",
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        f"--secure-port={port}",
        f"--tls-cert-file={pki.serving.cert}",
        f"--tls-private-key-file={pki.serving.key}",
        f"--client-ca-file={pki.ca.cert}",
        f"--service-account-issuer={ISSUER}",
        f"--service-account-key-file={sa_pub}",
        f"--service-account-signing-key-file={sa_key}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        "--authorization-mode=RBAC",
        "--allow-privileged=true",
        f"--cert-dir={pki.ca.cert.parent}",
    ]


@contextmanager
def anchor(directory: Path | None = None) -> Iterator[Anchor]:
    """etcd and kube-apiserver, ready; both stopped (and a temporary directory removed) on exit."""
    if not BINARY.exists():
        raise RuntimeError(f"{BINARY} is missing: run anchor/build.sh (make anchor)")
    with ExitStack() as stack:
        if directory is None:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="anchor-")))
        pki = certs.ensure(directory / "pki")
        sa_key, sa_pub = _service_account_keys(directory / "pki")
        etcd_url, etcd_pid = stack.enter_context(etcd(directory))
        port = free_port()
        url = f"https://127.0.0.1:{port}"
        log = directory / "kube-apiserver.log"
        proc = stack.enter_context(_process(apiserver_argv(port, etcd_url, pki, sa_key, sa_pub), log))
        config = kubeconfig.write(
            directory / "kubeconfig",
            kubeconfig.kubeconfig(
                url,
                ca_pem=pki.ca.cert.read_bytes(),
                cert_pem=pki.admin.cert.read_bytes(),
                key_pem=pki.admin.key.read_bytes(),
                name="anchor",
            ),
        )
        with admin_client(url, pki) as client:

            def ready() -> bool:
                try:
                    return client.get("/readyz", timeout=2).status_code == 200
                except httpx.HTTPError:
                    return False

            _wait(ready, proc, log, "kube-apiserver")
        yield Anchor(url, pki, config, proc.pid, etcd_pid, etcd_url)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anchor.launch", description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep it running until interrupted")
    args = parser.parse_args(argv)
    started = time.monotonic()
    with anchor() as server:
        print(f"kube-apiserver ready at {server.url} in {time.monotonic() - started:.1f} s")
        kubectl = [shutil.which("kubectl") or "kubectl", f"--kubeconfig={server.kubeconfig}"]
        subprocess.run([*kubectl, "version"], check=True, timeout=60)
        subprocess.run([*kubectl, "get", "ns"], check=True, timeout=60)
        if args.keep:
            print(f"kubeconfig: {server.kubeconfig}; Ctrl-C stops it", flush=True)
            with suppress(KeyboardInterrupt):
                signal.pause()
    return 0


if __name__ == "__main__":
    sys.exit(main())
