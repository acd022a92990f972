"""The ValidatingAdmissionPolicy status controller (upstream's validatingadmissionpolicystatus,
run by kube-apiserver): for every generation of a policy, status.observedGeneration and
status.typeChecking — whose expressionWarnings are the expressions that do not compile (write
validation refuses them: only a policy stored before could carry one) and the fields validations
select that the matched kinds do not have (gateway/admission/policy/typechecking.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from protokube.gateway.admission.policy.typechecking import expression_warnings
from protokube.gateway.admission.policy.validation import validate_policy
from protokube.gateway.controllers.informer import Informer
from protokube.gateway.errors import StatusError
from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.store import Store
from protokube.gateway.registry.subresources import StatusStore
from protokube.gateway.storage.backend import StorageError
from protokube.schema.registry import Registry

log = logging.getLogger("protokube.admissionpolicystatus")
RETRY_DELAY = 1.0
MANAGER = "validatingadmissionpolicy-status"  # upstream's field manager (it applies the status)
API_VERSION = "admissionregistration.k8s.io/v1"


class AdmissionPolicyStatus:
    def __init__(self, store: Store, registry: Registry) -> None:
        self.store = store
        self.registry = registry
        self.status = StatusStore(store)
        self.pending: dict[str, Obj] = {}  # the policies whose status is behind, as last seen
        self.dirty = asyncio.Event()

    # ---- the informer's sink ----
    def replace(self, views: Iterable[ObjectView]) -> None:
        self.pending = {view.obj.metadata.name: view.obj for view in views if _stale(view.obj)}
        self.dirty.set()

    def changed(self, event_type: str, view: ObjectView) -> None:
        name = view.obj.metadata.name
        if event_type != "DELETED" and _stale(view.obj):
            self.pending[name] = view.obj
            self.dirty.set()
        else:
            self.pending.pop(name, None)

    # ---- the controller ----
    async def run(self) -> None:
        informer = asyncio.create_task(Informer(self.store, self).run())
        try:
            while True:
                await self.dirty.wait()
                self.dirty.clear()
                for name in sorted(self.pending):
                    policy = self.pending.pop(name, None)
                    if policy is not None:
                        await self._sync(name, policy)
        finally:
            informer.cancel()
            await asyncio.gather(informer, return_exceptions=True)

    async def _sync(self, name: str, policy: Obj) -> None:
        options = WriteOptions(field_manager=MANAGER, force=True)
        try:
            await self.status.apply("", name, self._status(policy), options)
        except StatusError as err:
            if err.code != 404:
                log.warning("validatingadmissionpolicy %s status: %s", name, err.status.message)
                self._retry(name, policy)
        except StorageError as err:
            log.warning("validatingadmissionpolicy %s status: %s", name, err)
            self._retry(name, policy)

    def _status(self, policy: Obj) -> dict[str, Any]:
        """The status applied for ``policy``'s generation."""
        warnings = [
            {"fieldRef": problem.field, "warning": problem.detail}
            for problem in validate_policy(policy, None)
            if problem.detail.startswith("compilation failed")
        ]
        refs = {warning["fieldRef"] for warning in warnings}
        typed = expression_warnings(self.store.codec.to_dict(policy), self.registry)
        warnings += [warning for warning in typed if warning["fieldRef"] not in refs]
        return {
            "apiVersion": API_VERSION,
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": policy.metadata.name},
            "status": {
                "observedGeneration": policy.metadata.generation,
                "typeChecking": {"expressionWarnings": warnings} if warnings else {},
            },
        }

    def _retry(self, name: str, policy: Obj) -> None:
        self.pending.setdefault(name, policy)
        asyncio.get_running_loop().call_later(RETRY_DELAY, self.dirty.set)


def _stale(policy: Obj) -> bool:
    return policy.status.observedGeneration != policy.metadata.generation
