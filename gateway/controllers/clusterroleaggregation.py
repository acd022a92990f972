"""The ClusterRole aggregation controller (upstream's pkg/controller/clusterroleaggregation): a
ClusterRole with an aggregationRule gets as its rules the union of the rules of every other
ClusterRole one of its clusterRoleSelectors matches (in name order, each rule once), and keeps it
as ClusterRoles come, change and go — how admin, edit and view gather the aggregate-to-* roles.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from protokube.gateway import errors
from protokube.gateway.controllers.informer import Informer
from protokube.gateway.errors import StatusError
from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.store import Store
from protokube.gateway.selectors import EVERYTHING, SelectorError, label_selector_text, parse_labels
from protokube.gateway.storage.backend import StorageError

log = logging.getLogger("protokube.aggregation")
RETRY_DELAY = 1.0
Value = dict[str, Any]


def aggregated_rules(role: Value, roles: Iterable[Value]) -> list[Value] | None:
    """The rules ``role`` aggregates from ``roles``; None when its selectors are not valid."""
    try:
        texts = [label_selector_text(s) for s in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []]
        selectors = [parse_labels(text) if text else EVERYTHING for text in texts]
    except SelectorError:
        return None
    name = role["metadata"]["name"]
    rules: list[Value] = []
    for other in sorted(roles, key=lambda r: r["metadata"]["name"]):
        labels = other["metadata"].get("labels") or {}
        if other["metadata"]["name"] == name or not any(s.matches(labels) for s in selectors):
            continue
        rules += [rule for rule in other.get("rules") or [] if rule not in rules]
    return rules


class ClusterRoleAggregation:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.roles: dict[str, Value] = {}  # every ClusterRole, as its informer has them
        self.dirty = asyncio.Event()

    # ---- the informer's sink ----
    def replace(self, views: Iterable[ObjectView]) -> None:
        self.roles = {view.obj.metadata.name: view.codec.to_dict(view.obj) for view in views}
        self.dirty.set()

    def changed(self, event_type: str, view: ObjectView) -> None:
        if event_type == "DELETED":
            self.roles.pop(view.obj.metadata.name, None)
        else:
            self.roles[view.obj.metadata.name] = view.codec.to_dict(view.obj)
        self.dirty.set()

    # ---- the controller ----
    async def run(self) -> None:
        informer = asyncio.create_task(Informer(self.store, self).run())
        try:
            while True:
                await self.dirty.wait()
                self.dirty.clear()
                try:
                    await self.sync()
                except (StorageError, StatusError) as err:
                    log.warning("clusterrole aggregation: %s", err)
                    await asyncio.sleep(RETRY_DELAY)
                    self.dirty.set()
        finally:
            informer.cancel()
            await asyncio.gather(informer, return_exceptions=True)

    async def sync(self) -> None:
        for name, role in list(self.roles.items()):
            if not role.get("aggregationRule"):
                continue
            rules = aggregated_rules(role, self.roles.values())
            if rules is None or rules == (role.get("rules") or []):
                continue
            await self.store.update(
                "", name, lambda current, n=name, r=rules: self._with_rules(current, n, r), WriteOptions()
            )

    def _with_rules(self, current: Obj | None, name: str, rules: list[Value]) -> Obj:
        if current is None:
            raise errors.not_found(self.store.resource, name)
        value = self.store.codec.to_dict(current)
        value["rules"] = rules
        return self.store.codec.from_dict(value).obj
