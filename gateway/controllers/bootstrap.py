"""What kube-apiserver's post-start hooks put into every cluster, made once the watch caches run:

- the system PriorityClasses (hook ``scheduling/bootstrap-system-priority-classes``);
- a local APIService for every served group version that has a priority (the aggregator's
  autoregister controller: label ``kube-aggregator.kubernetes.io/automanaged: onstart``; its
  availability controller marks local ones ``Available`` with reason ``Local``). Automanaged
  APIServices of group versions no longer served (``--runtime-config``) are removed, changed
  specs put back.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from protokube.gateway.errors import StatusError
from protokube.gateway.params import DeleteOptions, ListOptions, WriteOptions
from protokube.gateway.registry.apiservicepriorities import PRIORITIES
from protokube.gateway.registry.store import Store, now_seconds
from protokube.gateway.registry.subresources import StatusStore
from protokube.schema.registry import Registry

SYSTEM_PRIORITY_CLASSES = [
    (
        "system-node-critical",
        2000001000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2000000000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
]
AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"
ON_START = "onstart"


async def ensure_system_priority_classes(store: Store) -> None:
    for name, value, description in SYSTEM_PRIORITY_CLASSES:
        data = {"metadata": {"name": name}, "value": value, "description": description}
        with contextlib.suppress(StatusError):  # 409: made on an earlier start
            await store.create("", store.codec.from_dict(data).obj, WriteOptions())


def local_apiservices(registry: Registry) -> dict[str, dict[str, Any]]:
    """The spec of each served group version's local APIService, by name ("v1.", "v1.apps")."""
    wanted: dict[str, dict[str, Any]] = {}
    for group, versions in registry.group_versions().items():
        for version in versions:
            if (group, version) not in PRIORITIES:
                continue
            group_priority, version_priority = PRIORITIES[(group, version)]
            wanted[f"{version}.{group}"] = {
                "group": group,
                "version": version,
                "groupPriorityMinimum": group_priority,
                "versionPriority": version_priority,
            }
    return wanted


async def ensure_local_apiservices(store: Store, registry: Registry) -> None:
    wanted = local_apiservices(registry)
    existing = {view.obj.metadata.name: view for view in (await store.list("", ListOptions())).items}
    for name, view in existing.items():
        automanaged = view.obj.metadata.labels.get(AUTOMANAGED) == ON_START
        if automanaged and name not in wanted:
            with contextlib.suppress(StatusError):
                await store.delete("", name, DeleteOptions())
    # all at once: storage commits them in a few batches
    await asyncio.gather(*(_ensure(store, name, spec, existing.get(name)) for name, spec in wanted.items()))


async def _ensure(store: Store, name: str, spec: dict[str, Any], existing: Any) -> None:
    """One local APIService as ``spec`` says, available."""
    data = {"metadata": {"name": name, "labels": {AUTOMANAGED: ON_START}}, "spec": spec}
    desired = store.codec.from_dict(data).obj
    if existing is None:
        with contextlib.suppress(StatusError):
            await store.create("", desired, WriteOptions())
    elif store.codec.to_dict(existing.obj).get("spec") != spec:
        await store.update("", name, lambda current: _with_spec(store, current, desired), WriteOptions())
    await _mark_available(store, name)


def _with_spec(store: Store, current: Any, desired: Any) -> Any:
    updated = store.codec.copy(current)
    updated.spec.CopyFrom(desired.spec)
    updated.metadata.labels[AUTOMANAGED] = ON_START
    return updated


async def _mark_available(store: Store, name: str) -> None:
    """The availability controller's answer for a local APIService (kept once set)."""

    def available(current: Any) -> Any:
        updated = store.codec.copy(current)
        condition = next((c for c in updated.status.conditions if c.type == "Available"), None)
        if condition is None:
            condition = updated.status.conditions.add(type="Available")
        if condition.status != "True":
            condition.status = "True"
            condition.lastTransitionTime.seconds = now_seconds()
        condition.reason = "Local"
        condition.message = "Local APIServices are always available"
        return updated

    await StatusStore(store).update("", name, available, WriteOptions())
