"""The tokens controller (upstream's pkg/controller/serviceaccount/tokens_controller.go): fills
legacy service account token Secrets.

A Secret of type kubernetes.io/service-account-token whose annotation
kubernetes.io/service-account.name names a service account gets a legacy token (signed with the
service account key) in data["token"], the cluster's CA in data["ca.crt"] and its namespace in
data["namespace"], and the account's uid in the annotation kubernetes.io/service-account.uid. A
token Secret whose service account does not exist (or has another uid) is deleted, and so are an
account's token Secrets when the account is deleted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from typing import Any

from protokube.gateway import errors
from protokube.gateway.auth.tokens.claims import Ref, legacy_claims
from protokube.gateway.auth.tokens.objects import Objects
from protokube.gateway.auth.tokens.request import Issuer
from protokube.gateway.controllers.informer import Informer
from protokube.gateway.errors import StatusError
from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import DeleteOptions, ListOptions, WriteOptions
from protokube.gateway.storage.backend import StorageError

log = logging.getLogger("protokube.tokens")
TOKEN_TYPE = "kubernetes.io/service-account-token"
ACCOUNT_NAME = "kubernetes.io/service-account.name"
ACCOUNT_UID = "kubernetes.io/service-account.uid"
TOKEN, CA, NAMESPACE = "token", "ca.crt", "namespace"
RETRY_DELAY = 1.0
# A secret or a deleted service account to look at: ("secret" | "account", namespace, name, uid).
Work = tuple[str, str, str, str]


class _Queue:
    """An informer sink that queues what the controller must look at."""

    def __init__(self, queue: asyncio.Queue[Work], kind: str) -> None:
        self.queue = queue
        self.kind = kind

    def replace(self, views: Iterable[ObjectView]) -> None:
        for view in views:
            self.changed("ADDED", view)

    def changed(self, event_type: str, view: ObjectView) -> None:
        meta = view.obj.metadata
        if self.kind == "secret" and event_type != "DELETED" and view.obj.type == TOKEN_TYPE:
            self.queue.put_nowait(("secret", meta.namespace, meta.name, meta.uid))
        elif self.kind == "account" and event_type == "DELETED":
            self.queue.put_nowait(("account", meta.namespace, meta.name, meta.uid))


class TokensController:
    def __init__(self, objects: Objects, issuer: Issuer, root_ca: bytes) -> None:
        self.objects = objects
        self.issuer = issuer
        self.root_ca = root_ca

    async def run(self) -> None:
        secrets, accounts = self.objects.store("Secret"), self.objects.store("ServiceAccount")
        if secrets is None or accounts is None:
            return
        queue: asyncio.Queue[Work] = asyncio.Queue()
        informers = [Informer(secrets, _Queue(queue, "secret")), Informer(accounts, _Queue(queue, "account"))]
        tasks = [asyncio.create_task(informer.run()) for informer in informers]
        try:
            while True:
                work = await queue.get()
                try:
                    await self.sync(work)
                except (StorageError, StatusError) as err:
                    log.warning("tokens controller: %s %s/%s: %s", work[0], work[1], work[2], err)
                    await asyncio.sleep(RETRY_DELAY)
                    queue.put_nowait(work)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def sync(self, work: Work) -> None:
        kind, namespace, name, uid = work
        if kind == "account":
            await self._account_deleted(namespace, name, uid)
            return
        secret = await self.objects.get("Secret", namespace, name)
        if secret is None or secret.type != TOKEN_TYPE or secret.metadata.uid != uid:
            return
        annotations = secret.metadata.annotations
        account = await self.objects.get("ServiceAccount", namespace, annotations.get(ACCOUNT_NAME, ""))
        wanted_uid = annotations.get(ACCOUNT_UID, "")
        if account is None or (wanted_uid and wanted_uid != account.metadata.uid):
            await self._delete(namespace, name, uid)
        elif self._needs_update(secret, account):
            await self._fill(namespace, name, account)

    def _needs_update(self, secret: Any, account: Any) -> bool:
        data = secret.data
        return (
            not data.get(TOKEN)
            or not data.get(NAMESPACE)
            or (bool(self.root_ca) and data.get(CA) != self.root_ca)
            or secret.metadata.annotations.get(ACCOUNT_UID) != account.metadata.uid
        )

    async def _fill(self, namespace: str, name: str, account: Any) -> None:
        store = self.objects.store("Secret")
        assert store is not None

        def filled(current: Obj | None) -> Obj:
            if current is None:
                raise errors.not_found(store.resource, name)
            secret = store.codec.copy(current)
            data = secret.data
            if not data.get(TOKEN):
                claims = legacy_claims(namespace, Ref(account.metadata.name, account.metadata.uid), name)
                data[TOKEN] = self.issuer.sign(claims).encode()
            if self.root_ca:
                data[CA] = self.root_ca
            if not data.get(NAMESPACE):
                data[NAMESPACE] = namespace.encode()
            secret.metadata.annotations[ACCOUNT_NAME] = account.metadata.name
            secret.metadata.annotations[ACCOUNT_UID] = account.metadata.uid
            return secret

        with contextlib.suppress(StatusError):  # gone meanwhile: nothing to fill
            await store.update(namespace, name, filled, WriteOptions())

    async def _delete(self, namespace: str, name: str, uid: str) -> None:
        store = self.objects.store("Secret")
        assert store is not None
        with contextlib.suppress(StatusError):  # gone or replaced meanwhile
            await store.delete(namespace, name, DeleteOptions(precondition_uid=uid))

    async def _account_deleted(self, namespace: str, name: str, uid: str) -> None:
        store = self.objects.store("Secret")
        assert store is not None
        for view in (await store.list(namespace, ListOptions())).items:
            secret = view.obj
            annotations = secret.metadata.annotations
            if secret.type != TOKEN_TYPE or annotations.get(ACCOUNT_NAME) != name:
                continue
            if annotations.get(ACCOUNT_UID, uid) == uid:
                await self._delete(namespace, name=secret.metadata.name, uid=secret.metadata.uid)
