"""Test helpers: the storage service as a real subprocess on a free loopback port, gRPC stubs."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc

from protokube.gen.etcdserverpb import rpc_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StorageProcess:
    """`python -m protokube storage` on a free port; killed at the end of its fixture."""

    def __init__(self, data_dir: Path, *args: str) -> None:
        self.data_dir = data_dir
        self.args = args
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.log: list[str] = []

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> StorageProcess:
        self.port = free_port()
        cmd = [sys.executable, "-m", "protokube", "storage", "--listen", self.address]
        cmd += ["--data-dir", str(self.data_dir), *self.args]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        ready = threading.Event()

        def pump(stream) -> None:
            for line in stream:
                self.log.append(line)
                if line.startswith("storage listening on"):
                    ready.set()

        threading.Thread(target=pump, args=(self.proc.stdout,), daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT
        while not ready.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError("storage did not start:\n" + "".join(self.log))
        return self

    def kill(self) -> None:
        """SIGKILL: no chance to flush or clean up."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def terminate(self, timeout: float = 10.0) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise


class Stubs:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel
        self.kv = rpc_pb2_grpc.KVStub(channel)
        self.watch = rpc_pb2_grpc.WatchStub(channel)
        self.lease = rpc_pb2_grpc.LeaseStub(channel)
        self.maintenance = rpc_pb2_grpc.MaintenanceStub(channel)


def run(address: str, test, timeout: float = 30.0):
    """Run `async def test(stubs)` against a server, with a fresh grpc.aio channel."""

    async def main():
        async with grpc.aio.insecure_channel(
            address, options=[("grpc.max_receive_message_length", 64 * 1024 * 1024)]
        ) as channel:
            return await asyncio.wait_for(test(Stubs(channel)), timeout)

    return asyncio.run(main())
