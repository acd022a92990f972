"""Fixtures: storage servers (real subprocesses on free loopback ports), unique key prefixes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import StorageProcess


@pytest.fixture
def storage_factory(tmp_path: Path) -> Iterator:
    """Start extra servers (own data dir unless given); all killed afterwards."""
    started: list[StorageProcess] = []

    def make(*args: str, data_dir: Path | None = None) -> StorageProcess:
        server = StorageProcess(data_dir or tmp_path / f"data{len(started)}", *args).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.kill()


@pytest.fixture(scope="session")
def storage(tmp_path_factory) -> Iterator[StorageProcess]:
    """The shared server: no auto-compaction, 1 s progress notifications."""
    server = StorageProcess(
        tmp_path_factory.mktemp("storage"), "--compaction-retention", "0", "--progress-notify-interval", "1"
    ).start()
    yield server
    server.kill()


_prefix_counter = iter(range(1_000_000))


@pytest.fixture
def prefix(request) -> bytes:
    """A key prefix no other test uses (the session server is shared)."""
    return f"/{request.node.name}/{next(_prefix_counter)}/".encode()
