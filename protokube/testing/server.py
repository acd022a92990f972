"""``Server``: `protokube serve` as a child process for a test, a script or a notebook.

    with Server() as api:
        subprocess.run(["kubectl", "--kubeconfig", api.kubeconfig, "get", "ns"], check=True)

The server listens on free 127.0.0.1 ports with its data in a temporary directory (or ``data_dir``,
kept afterwards for inspection). ``start`` returns once ``/readyz`` answers 200; a server that
cannot start raises ``ServerError`` with its own output at once. The child asks the kernel for
SIGTERM when the thread that started it ends (protokube/parent.py), so a killed test process leaves
no server behind: start it from a thread that lives as long as the server should (the main thread).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import httpx

from protokube.parent import child_env

EMBEDDED, MEMORY = "embedded", "memory"  # storage kinds; anything else is an etcd endpoint
LOG_FILE = "serve.log"
SERVING = "protokube serving on"  # the line serve prints once it listens
PORT_TAKEN = "Address already in use"
PORT_ATTEMPTS = 3  # starts on free ports that someone else took meanwhile
POLL_SECONDS = 0.01
STOP_SECONDS = 10.0


class ServerError(RuntimeError):
    """The server could not start; the message holds what it printed."""


@dataclass(frozen=True)
class Admin:
    """The admin's credentials (user kubernetes-admin, group system:masters) and the server's CA."""

    ca: Path
    cert: Path
    key: Path


def free_port() -> int:
    """A port free on 127.0.0.1 now (someone may take it before the server binds it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def flag_value(value: Mapping[str, bool | str] | str) -> str:
    """``{"A": True, "b/v1": "false"}`` as ``A=true,b/v1=false`` (--feature-gates, --runtime-config)."""
    if isinstance(value, str):
        return value
    return ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in value.items())


class Server:
    """A `protokube serve` child process: ``url``, ``kubeconfig``, ``admin``, ``insecure_url``."""

    def __init__(
        self,
        *,
        storage: str = EMBEDDED,
        feature_gates: Mapping[str, bool] | str | None = None,
        runtime_config: Mapping[str, bool | str] | str | None = None,
        args: Sequence[str] = (),
        insecure: bool = False,
        data_dir: str | os.PathLike[str] | None = None,
        port: int = 0,
        start_timeout: float = 60.0,
    ) -> None:
        """``storage``: "embedded" (SQLite in the data dir), "memory" (the same storage service, its
        database in memory) or an etcd endpoint HOST:PORT; ``args``: more `protokube serve` flags;
        ``insecure``: also plain HTTP where every request acts as system:masters (``insecure_url``);
        ``port``: the HTTPS port (0: a free one)."""
        self.storage = storage
        self.flags = list(args)
        if storage == MEMORY:
            self.flags.append("--storage-in-memory")
        elif storage != EMBEDDED:
            self.flags += ["--storage", storage]
        if feature_gates:
            self.flags.append(f"--feature-gates={flag_value(feature_gates)}")
        if runtime_config:
            self.flags.append(f"--runtime-config={flag_value(runtime_config)}")
        self.insecure = insecure
        self.keep = data_dir is not None
        self.data_dir = Path(data_dir) if data_dir is not None else Path()
        self.fixed_port = port
        self.start_timeout = start_timeout
        self.port = 0
        self.insecure_port = 0
        self.process: subprocess.Popen[bytes] | None = None

    # --- what a test uses ---------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def insecure_url(self) -> str | None:
        """The plain-HTTP URL (every request acts as system:masters), when ``insecure`` asked for it."""
        return f"http://127.0.0.1:{self.insecure_port}" if self.insecure else None

    @property
    def kubeconfig(self) -> Path:
        """The admin kubeconfig the server wrote (its CA and the admin's client certificate)."""
        return self.data_dir / "kubeconfig"

    @property
    def admin(self) -> Admin:
        pki = self.data_dir / "pki"
        return Admin(pki / "ca.crt", pki / "admin.crt", pki / "admin.key")

    @property
    def log(self) -> str:
        """What the server printed so far."""
        try:
            return (self.data_dir / LOG_FILE).read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def client(self, timeout: float = 30.0) -> httpx.Client:
        """An HTTPS client of the API acting as the admin."""
        admin = self.admin
        context = ssl.create_default_context(cafile=admin.ca)
        context.load_cert_chain(admin.cert, admin.key)
        return httpx.Client(base_url=self.url, verify=context, timeout=timeout)

    # --- lifecycle ------------------------------------------------------------------------
    def __enter__(self) -> Server:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> Server:
        """Start and wait until ready; on ports picked here, again on others when one was taken meanwhile."""
        if not self.keep:
            self.data_dir = Path(tempfile.mkdtemp(prefix="protokube-"))
        self.data_dir.mkdir(parents=True, exist_ok=True)
        attempt = 1
        while True:
            try:
                self._start()
                return self
            except ServerError as err:
                self.stop(remove=False)
                if self.fixed_port or attempt == PORT_ATTEMPTS or PORT_TAKEN not in str(err):
                    self._remove()
                    raise
                attempt += 1

    def _start(self) -> None:
        self.port = self.fixed_port or free_port()
        self.insecure_port = free_port() if self.insecure else 0
        command = [sys.executable, "-m", "protokube", "serve", "--listen", f"127.0.0.1:{self.port}"]
        if self.insecure:
            command += ["--insecure-listen", f"127.0.0.1:{self.insecure_port}"]
        command += ["--data-dir", str(self.data_dir), *self.flags]
        with open(self.data_dir / LOG_FILE, "wb") as log:
            # A session of its own: stop() signals the server and the gateway workers it may start (its
            # storage child, in a group of its own, is stopped by the server or dies with it).
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=child_env(),
                start_new_session=True,
            )  # fmt: skip
        self._wait_ready(time.monotonic() + self.start_timeout)

    def _wait_ready(self, deadline: float) -> None:
        while SERVING not in self.log:
            self._check(deadline)
            time.sleep(POLL_SECONDS)
        with self.client(timeout=5) as client:
            while True:
                try:
                    if client.get("/readyz").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                self._check(deadline)
                time.sleep(POLL_SECONDS)

    def _check(self, deadline: float) -> None:
        """Raise with the server's output when it exited or the deadline passed."""
        assert self.process is not None
        code = self.process.poll()
        if code is not None:
            raise ServerError(f"protokube serve exited with code {code}:\n{self.log}")
        if time.monotonic() > deadline:
            raise ServerError(f"protokube serve was not ready within {self.start_timeout} s:\n{self.log}")

    def stop(self, remove: bool = True) -> None:
        """Stop the server and its children (SIGTERM, SIGKILL after 10 s); remove a temporary data dir."""
        process, self.process = self.process, None
        if process is not None:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(STOP_SECONDS)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            _kill_group(process.pid)  # what is left of its session (the storage child)
        if remove:
            self._remove()

    def _remove(self) -> None:
        if not self.keep and self.data_dir != Path():
            shutil.rmtree(self.data_dir, ignore_errors=True)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
