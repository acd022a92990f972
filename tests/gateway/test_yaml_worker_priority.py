"""The process that decodes large YAML bodies runs at a lower scheduling priority than the gateway
serving requests (issue 34 item 5): where both want the same core, the serving loop wins it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import GatewayProcess

NICENESS = 10  # gateway/negotiation/yamlworker.py's WORKER_NICENESS


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command name (fields 3 on: state, ppid, ...)."""
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()


def _descendants(root: int) -> Iterator[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                children.setdefault(int(_stat(int(entry.name))[1]), []).append(int(entry.name))
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue  # ended meanwhile
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), []):
            yield child
            pending.append(child)


def _command(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path / "yaml-worker").start()
    yield process
    process.kill()


def test_the_yaml_worker_runs_at_a_lower_priority(server: GatewayProcess) -> None:
    assert server.proc is not None
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: large}\ndata:\n"
    body += "".join(f"  k{n}: v{n}\n" for n in range(5_000))  # past the 16 KiB parsed on the loop
    with server.client() as client:
        response = client.post(
            "/api/v1/namespaces/default/configmaps", content=body, headers={"Content-Type": "application/yaml"}
        )
    assert response.status_code == 201, response.text
    processes = {pid: _command(pid) for pid in _descendants(server.proc.pid)}
    workers = [pid for pid, command in processes.items() if "multiprocessing.spawn" in command]
    assert workers, processes
    for pid in workers:
        parent = int(_stat(pid)[1])
        assert int(_stat(pid)[16]) - int(_stat(parent)[16]) == NICENESS, (pid, processes[pid])
