"""A kind's field manager is made at the kind's first write, not when the server is built: making one
types the kind's object, and most kinds a server serves are not written before it is ready."""

from __future__ import annotations

from protokube.gateway.params import WriteOptions

from .stack import run, running_server

SECRETS = ("", "v1", "secrets")  # a kind nothing writes while the server starts


def test_field_manager_is_made_at_the_first_write() -> None:
    async def scenario() -> None:
        async with running_server() as server:
            store = server.stores[SECRETS]
            assert store.ownership is not None
            assert store.ownership._fields is None  # not made while the server was built and started
            secret = store.codec.from_dict({"metadata": {"name": "first"}, "stringData": {"a": "b"}}).obj
            created = await store.create("default", secret, WriteOptions(field_manager="tester"))
            assert [entry.manager for entry in created.obj.metadata.managedFields] == ["tester"]
            assert store.ownership._fields is not None

    run(scenario)
