"""generateName gives up after 8 taken names, with upstream's 409 (k8s.io/apiserver RetryGenerateName).

Collisions among 27^5 random suffixes cannot be provoked through HTTP, so this test drives the
store directly with the name generator made to repeat itself.
"""

from __future__ import annotations

import pytest

from protokube.gateway.errors import StatusError
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.store import GENERATE_NAME_ATTEMPTS
from protokube.gen.k8s.io.api.core.v1 import types_pb2 as core

from .stack import run, running_server


def test_generate_name_gives_up_after_8_attempts() -> None:
    attempts: list[str] = []

    def same_name(prefix: str) -> str:
        attempts.append(prefix)
        return prefix + "aaaaa"

    async def scenario() -> StatusError:
        async with running_server() as server:
            configmaps = server.stores[("", "v1", "configmaps")]
            configmaps.generate_name = same_name

            def generated() -> core.ConfigMap:
                return core.ConfigMap(metadata={"generateName": "gen-"})

            first = await configmaps.create("default", generated(), WriteOptions())
            assert first.obj.metadata.name == "gen-aaaaa"
            attempts.clear()
            with pytest.raises(StatusError) as raised:
                await configmaps.create("default", generated(), WriteOptions())
            return raised.value

    error = run(scenario)
    assert len(attempts) == GENERATE_NAME_ATTEMPTS == 8
    assert error.code == 409 and error.headers == {"Retry-After": "1"}
    status = error.status
    assert status.reason == "AlreadyExists" and status.details.retryAfterSeconds == 1
    assert status.message == (
        'configmaps "gen-aaaaa" already exists, the server was not able to generate a unique name for the object'
    )
