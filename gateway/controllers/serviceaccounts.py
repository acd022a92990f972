"""The serviceaccount controller (kube-controller-manager's, pkg/controller/serviceaccount): a
ServiceAccount ``default`` in every active namespace, made again when it is deleted. A namespace
being deleted gets none (the namespace controller is emptying it).
"""

from __future__ import annotations

from protokube.gateway.controllers.pernamespace import create, run_per_namespace
from protokube.gateway.registry.store import Store

DEFAULT = "default"


class ServiceAccountsController:
    def __init__(self, namespaces: Store, accounts: Store) -> None:
        self.namespaces = namespaces
        self.accounts = accounts

    async def run(self) -> None:
        await run_per_namespace(self.namespaces, self.accounts, DEFAULT, self.sync)

    async def sync(self, namespace: str) -> None:
        if self.accounts.storage.cached(namespace, DEFAULT) is None:
            await create(self.namespaces, self.accounts, namespace, {"metadata": {"name": DEFAULT}})
