"""What a stopped server must not leave behind: processes that name its data dir, a listening port."""

from __future__ import annotations

import socket
import time
from pathlib import Path


def processes_of(data_dir: Path) -> list[int]:
    """Processes whose command line names ``data_dir`` (the server and its storage child)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            state = next(line for line in (proc / "status").read_text().splitlines() if line.startswith("State:"))
        except (OSError, StopIteration):
            continue
        if "zombie" not in state and any(str(data_dir).encode() in part for part in cmdline):
            found.append(int(proc.name))
    return found


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def gone(data_dir: Path, port: int, timeout: float = 30.0) -> tuple[list[int], bool]:
    """Wait until no process names ``data_dir`` and nothing listens on ``port``; what is left then."""
    deadline = time.monotonic() + timeout
    while (processes_of(data_dir) or listening(port)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return processes_of(data_dir), listening(port)
