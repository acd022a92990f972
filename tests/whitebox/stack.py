"""The gateway's layers over the in-memory storage backend, for white-box tests without processes.

``APIServer`` is the same composition root `protokube serve` uses; here it runs on a MemoryBackend
inside the test's event loop, and tests call its stores directly.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from protokube.gateway.app import APIServer, Settings
from protokube.gateway.runtimeconfig import RuntimeConfig
from protokube.gateway.storage.memory import MemoryBackend
from protokube.schema import descriptors
from protokube.schema.registry import build

T = TypeVar("T")
TIMEOUT = 30.0


@contextlib.asynccontextmanager
async def running_server(backend: MemoryBackend | None = None) -> AsyncIterator[APIServer]:
    registry = build(descriptors.all_messages())
    RuntimeConfig().apply(registry)  # what a server serves by default
    server = APIServer(backend or MemoryBackend(), "test:0", registry, Settings())
    await server.start()
    await server.bootstrapped.wait()
    try:
        yield server
    finally:
        await server.stop()


def run(scenario: Callable[[], Awaitable[T]]) -> T:
    """Run one async scenario to completion, bounded in time."""
    return asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
