"""The bootstrap policy reconciled at each start (upstream's rbac/bootstrap-roles post-start hook and
pkg/registry/rbac/reconciliation), through the stores clients use.

A missing object is created. An existing one annotated rbac.authorization.kubernetes.io/autoupdate
"false" is left alone; otherwise it gains what it lacks and keeps what it has: labels and
annotations it does not set, rules its rules do not cover (added broken down to one verb each),
aggregation selectors, binding subjects. A binding whose roleRef differs is replaced (a roleRef
cannot be changed), keeping its subjects.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from typing import Any

from protokube.gateway.auth.bootstrap import AUTOUPDATE, Policy
from protokube.gateway.auth.escalation import uncovered
from protokube.gateway.errors import StatusError
from protokube.gateway.params import DeleteOptions, ListOptions, WriteOptions
from protokube.gateway.registry.store import Store

Value = dict[str, Any]


async def reconcile_policy(policy: Policy, stores: dict[str, Store | None]) -> None:
    """``stores``: the RBAC resources' stores by plural (None when not served). The four kinds at once,
    and each kind's objects at once: storage commits them in a few batches."""
    await asyncio.gather(
        _reconcile_kind(stores.get("clusterroles"), policy.cluster_roles, reconciled_role),
        _reconcile_kind(stores.get("clusterrolebindings"), policy.cluster_role_bindings, reconciled_binding),
        _reconcile_kind(stores.get("roles"), policy.roles, reconciled_role),
        _reconcile_kind(stores.get("rolebindings"), policy.role_bindings, reconciled_binding),
    )


async def _reconcile_kind(store: Store | None, objects: list[Value], reconciled: Any) -> None:
    """One kind's objects, against what one list of the kind finds (not one read per object)."""
    if store is None:
        return
    found = {(v.obj.metadata.namespace, v.obj.metadata.name): v for v in (await store.list("", ListOptions())).items}
    await asyncio.gather(*(_reconcile(store, expected, reconciled, found) for expected in objects))


async def _reconcile(store: Store, expected: Value, reconciled: Any, found: dict[tuple[str, str], Any]) -> None:
    namespace, name = expected["metadata"].get("namespace", ""), expected["metadata"]["name"]
    current = found.get((namespace, name))
    if current is None:
        await store.create(namespace, store.codec.from_dict(expected).obj, WriteOptions())
        return
    existing = store.codec.to_dict(current.obj)
    if (existing["metadata"].get("annotations") or {}).get(AUTOUPDATE) == "false":
        return
    wanted = reconciled(existing, expected)
    if wanted == existing:
        return
    if wanted.get("roleRef") != existing.get("roleRef"):
        with contextlib.suppress(StatusError):  # 404: gone meanwhile
            await store.delete(namespace, name, DeleteOptions(precondition_uid=existing["metadata"].get("uid")))
        for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
            wanted["metadata"].pop(key, None)
        await store.create(namespace, store.codec.from_dict(wanted).obj, WriteOptions())
        return
    replacement = store.codec.from_dict(wanted).obj  # carries the resourceVersion read: a conflict retries
    await store.update(namespace, name, lambda _: replacement, WriteOptions())


def _with_metadata(existing: Value, expected: Value) -> Value:
    """A copy of ``existing`` with the labels and annotations it lacks."""
    result = copy.deepcopy(existing)
    meta = result["metadata"]
    for key in ("labels", "annotations"):
        merged = {**(expected["metadata"].get(key) or {}), **(meta.get(key) or {})}
        if merged:
            meta[key] = merged
    return result


def reconciled_role(existing: Value, expected: Value) -> Value:
    result = _with_metadata(existing, expected)
    missing = uncovered(existing.get("rules") or [], expected.get("rules") or [])
    if missing:
        result["rules"] = [*(existing.get("rules") or []), *missing]
    wanted_selectors = (expected.get("aggregationRule") or {}).get("clusterRoleSelectors") or []
    if wanted_selectors:
        rule = result.setdefault("aggregationRule", {})
        selectors = rule.setdefault("clusterRoleSelectors", [])
        selectors += [s for s in wanted_selectors if s not in selectors]
    return result


def reconciled_binding(existing: Value, expected: Value) -> Value:
    result = _with_metadata(existing, expected)
    subjects = existing.get("subjects") or []
    missing = [s for s in expected.get("subjects") or [] if s not in subjects]
    if missing:
        result["subjects"] = [*subjects, *missing]
    result["roleRef"] = expected["roleRef"]
    return result
