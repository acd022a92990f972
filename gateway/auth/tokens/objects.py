"""The objects service account tokens depend on, as the token authenticator and the token
controller look them up (upstream's ServiceAccountTokenGetter): from the watch cache first, from
storage when the cache has not seen them (yet)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protokube.gateway.errors import StatusError
from protokube.gateway.registry.store import Store

CORE_KINDS = {"ServiceAccount": "serviceaccounts", "Secret": "secrets", "Pod": "pods", "Node": "nodes"}


class Objects:
    def __init__(self, stores: Mapping[tuple[str, str, str], Store]) -> None:
        self.stores = stores  # owned by the API server (resources may come and go)

    def store(self, kind: str) -> Store | None:
        return self.stores.get(("", "v1", CORE_KINDS[kind]))

    async def get(self, kind: str, namespace: str, name: str) -> Any | None:
        """The object (a message), or None when there is none."""
        store = self.store(kind)
        if store is None or not name:
            return None
        for resource_version in ("0", None):
            try:
                return (await store.get(namespace, name, resource_version)).obj
            except StatusError as err:
                if err.status.code != 404:
                    raise
        return None
