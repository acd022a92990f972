"""The ResourceQuota admission plugin (k8s.io/apiserver's plugin/resourcequota): a write that
would take a namespace's usage beyond one of its quotas is refused, and an admitted one is charged
to the quotas' status.used before it is stored.

The charge is a compare-and-swap: the new status is written on condition that the quota is still
at the resourceVersion it was checked against; on a conflict the quota is read again from
storage and the request checked once more (three more times at most, then upstream's 409), so
gateways sharing storage never admit beyond a quota together. In one gateway a namespace's
requests are checked one at a time. Quotas are read from the watch cache, or this gateway's own
newer write of them. A quota counts only once the resourcequota controller gave it a status;
dry runs are checked and not charged; deletions are given back by the controller's recount. A
request whose check and charge take more than 10 seconds gets upstream's 500 (resource quota
evaluation timed out).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

from google.protobuf.message import Message

from protokube.gateway import errors
from protokube.gateway.admission.lookup import NamespaceLookup
from protokube.gateway.admission.resourcelist import (
    ResourceList,
    add,
    exceeded,
    from_message,
    mask,
    negative,
    pretty,
    remove_zeros,
    subtract_nonnegative,
)
from protokube.gateway.admission.resourcequota.configuration import LimitedResource
from protokube.gateway.admission.resourcequota.evaluators import IGNORED, Evaluator, Scope, evaluator_for, scopes_of
from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.admission import CREATE, UPDATE, Attributes, forbidden
from protokube.gateway.watchcache.cacher import Cacher

QUOTAS = ("", "v1", "resourcequotas")
NAMESPACE = "k8s.io.api.core.v1.Namespace"
RETRIES = 3  # rechecks after a conflicting status write (upstream's checkQuotas)
EVALUATION_TIMEOUT = 10.0  # seconds a request waits for its quota check and charge (upstream's)


def _go_scopes(scopes: list[Scope]) -> str:
    """Scope requirements as Go's %v prints a slice of them."""
    return "[" + " ".join(f"{{{s.name} {s.operator} [{' '.join(s.values)}]}}" for s in scopes) + "]"


def check_request(
    quotas: list[Message], attributes: Attributes, evaluator: Evaluator, limited: tuple[LimitedResource, ...] = ()
) -> dict[str, ResourceList]:
    """The new status.used of each quota the request is charged to (CheckRequest); a 403 when
    it does not fit, when a quota's usage is not known yet, when the object lacks what a quota
    requires of it, or when it consumes what the configuration limits and no quota covers."""
    obj = attributes.obj
    limited_scopes = [scope for item in limited for scope in item.match_scopes if evaluator.matches_scope(scope, obj)]
    limited_names: set[str] = set()
    own = [item for item in limited if (item.group, item.resource) == evaluator.group_resource]
    if own:
        consumed = [name for name, value in evaluator.usage(obj).items() if value.value > 0]
        limited_names = {name for item in own for name in consumed if any(part in name for part in item.match_contains)}
    interesting, covered, quota_scopes = [], set(), []
    for quota in quotas:
        quota_scopes += [scope for scope in scopes_of(quota) if evaluator.matches_scope(scope, obj)]
        if not evaluator.matches(quota, obj):
            continue
        name = quota.metadata.name
        restricted = evaluator.matching_resources(quota.status.hard)
        problem = evaluator.constraints(restricted, obj)
        if problem is not None:
            raise forbidden(attributes, f"failed quota: {name}: {problem}")
        if any(resource not in quota.status.used for resource in restricted):
            raise forbidden(attributes, f"status unknown for quota: {name}, resources: {','.join(sorted(restricted))}")
        interesting.append(quota)
        covered.update(restricted)
    usage = evaluator.usage(obj)
    if below_zero := negative(usage):
        raise forbidden(attributes, f"quota usage is negative for resource(s): {','.join(sorted(below_zero))}")
    deltas = {quota.metadata.name: usage for quota in interesting}
    unquoted = usage if attributes.operation == CREATE else {}  # the change when no quota counts it
    if attributes.operation == UPDATE:
        old = attributes.old
        if old is None:
            raise forbidden(attributes, "unable to get previous usage since prior version of object was not found")
        unquoted = usage
        if old.metadata.resourceVersion:  # an update, not a create-on-update: only the difference
            unquoted = difference = subtract_nonnegative(usage, evaluator.usage(old))
            for quota in interesting:
                if evaluator.matches(quota, old):
                    deltas[quota.metadata.name] = difference
    deltas = {name: remove_zeros(delta) for name, delta in deltas.items()}
    deltas = {name: delta for name, delta in deltas.items() if delta}
    if not (deltas if interesting else remove_zeros(unquoted)):
        return {}
    if uncovered := limited_names - covered:
        raise forbidden(attributes, f"insufficient quota to consume: {','.join(sorted(uncovered))}")
    uncovered_scopes = [s for s in limited_scopes if not any(m.name == s.name for m in quota_scopes)]
    if uncovered_scopes:  # upstream returns a plain error here: a 500 without a reason
        raise errors.new(500, "", f"insufficient quota to match these scopes: {_go_scopes(uncovered_scopes)}")
    charged = {}
    for quota in interesting:
        name = quota.metadata.name
        if name not in deltas:
            continue
        hard, used = from_message(quota.status.hard), from_message(quota.status.used)
        requested = mask(deltas[name], hard)
        new_used = add(used, requested)
        over = exceeded(mask(new_used, requested), hard)
        if over:
            raise forbidden(
                attributes,
                f"exceeded quota: {name}, requested: {pretty(mask(requested, over))}, "
                f"used: {pretty(mask(used, over))}, limited: {pretty(mask(hard, over))}",
            )
        charged[name] = new_used
    return charged


class ResourceQuota:
    """``quotas``: the ResourceQuotas' watch cache; ``stores``: the server's stores (the quotas'
    one writes their status); ``limited``: the configuration's limited resources."""

    def __init__(
        self, quotas: Cacher, stores: Mapping[tuple[str, str, str], Any], limited: tuple[LimitedResource, ...] = ()
    ) -> None:
        self.quotas = quotas
        self.limited = limited
        self.lookup = NamespaceLookup(quotas)
        self.stores = stores
        self._written: dict[tuple[str, str], ObjectView] = {}  # this gateway's latest status writes
        self._locks: dict[str, tuple[asyncio.Lock, list[int]]] = {}  # namespace -> (lock, [users])

    async def validate(self, attributes: Attributes) -> None:
        if attributes.subresource or not attributes.namespace or attributes.operation not in (CREATE, UPDATE):
            return
        resource = attributes.resource
        if resource.message == NAMESPACE or (resource.group, resource.plural) in IGNORED:
            return
        evaluator = evaluator_for(resource.group, resource.plural)
        if not evaluator.handles(attributes):
            return
        namespace = attributes.namespace
        if not self.limited and not await self._current(namespace):
            return
        try:
            async with asyncio.timeout(EVALUATION_TIMEOUT), self._serialized(namespace):
                await self._charge(attributes, evaluator, await self._current(namespace))
        except TimeoutError:
            raise errors.internal("resource quota evaluation timed out") from None

    async def _charge(self, attributes: Attributes, evaluator: Evaluator, quotas: list[Message]) -> None:
        """Check the request against ``quotas`` and write their new usage; again with the fresh
        quotas whose write conflicted."""
        namespace = attributes.namespace
        for attempt in range(RETRIES + 1):
            charged = check_request(quotas, attributes, evaluator, self.limited)
            if attributes.dry_run or not charged:
                return
            failed: list[str] = []
            last: errors.StatusError | None = None
            for quota in quotas:
                name = quota.metadata.name
                if name not in charged:
                    continue
                try:
                    await self._write_usage(quota, charged[name])
                except errors.StatusError as err:
                    failed.append(name)
                    last = err
            if last is None:
                return
            if attempt == RETRIES:
                raise last
            fresh = [await self.quotas.get_latest(namespace, name) for name in failed]
            quotas = [view.obj for view in fresh if view is not None]  # a quota deleted meanwhile is gone

    async def _write_usage(self, quota: Message, used: ResourceList) -> None:
        """status.used written if the quota is still as it was read (409 otherwise)."""
        store = self.stores[QUOTAS]
        namespace, name = quota.metadata.namespace, quota.metadata.name

        def updated(current: Obj | None) -> Obj:
            if current is None:
                raise errors.not_found(store.resource, name)
            new = store.codec.copy(current)
            new.metadata.resourceVersion = quota.metadata.resourceVersion
            new.status.ClearField("used")
            for resource, value in used.items():
                new.status.used[resource].string = str(value)
            return new

        view, _ = await store.guaranteed_update(
            namespace, name, updated, WriteOptions(), store.strategy.prepare_for_status_update, subresource="status"
        )
        self._written[(namespace, name)] = view

    async def _current(self, namespace: str) -> list[Message]:
        """The namespace's quotas: the cache's, or this gateway's own write when that is newer."""
        quotas = []
        for view in await self.lookup.views(namespace):
            key = (namespace, view.obj.metadata.name)
            written = self._written.get(key)
            if written is not None and written.resource_version > view.resource_version:
                view = written
            else:
                self._written.pop(key, None)  # the cache has caught up
            quotas.append(view.obj)
        return quotas

    @contextlib.asynccontextmanager
    async def _serialized(self, namespace: str) -> AsyncIterator[None]:
        """One request of a namespace at a time (upstream's evaluator works per namespace)."""
        lock, users = self._locks.setdefault(namespace, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[namespace]
