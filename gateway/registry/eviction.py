"""pods/NAME/eviction (upstream's EvictionREST): delete a pod unless that would violate its
PodDisruptionBudget.

A pod that is not running (pending, succeeded, failed) or already being deleted is deleted at once.
Otherwise its namespace's budgets whose selector matches it decide: none, and it is deleted; more
than one, and the answer is a 500 Status; one, and the budget must allow a disruption — the
eviction then takes one (status.disruptionsAllowed - 1, the pod in status.disruptedPods) before
deleting the pod, or answers 429 TooManyRequests with a DisruptionBudget cause.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from protokube.gateway import errors
from protokube.gateway.errors import StatusError
from protokube.gateway.objects.codec import Codec, Obj
from protokube.gateway.params import (
    DeleteOptions,
    ListOptions,
    WriteOptions,
    checked_delete_options,
    merged_delete_options,
)
from protokube.gateway.registry.store import Store, now_seconds
from protokube.gateway.selectors import SelectorError, label_selector, label_selector_text
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta

# More not-yet-confirmed evictions than this in a budget's status.disruptedPods: refused.
MAX_DISRUPTED_PODS = 2000
# Attempts when a pod or budget changes under an eviction.
ATTEMPTS = 20
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
DRY_RUN_ALL = ("All",)
TOO_MANY = "Cannot evict pod as it would violate the pod's disruption budget."
MORE_THAN_ONE = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


def too_many_requests(cause: str, retry_after: int) -> StatusError:
    details = meta.StatusDetails(retryAfterSeconds=retry_after)
    details.causes.add(reason=DISRUPTION_BUDGET_CAUSE, message=cause)
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    status = errors.new(429, "TooManyRequests", TOO_MANY, details).status
    return StatusError(status, headers)


def still_processing(budget: str) -> StatusError:
    return too_many_requests(f"The disruption budget {budget} is still being processed by the server.", 10)


def _status(state: str, code: int = 0, message: str = "") -> meta.Status:
    status = meta.Status(status=state, code=code, message=message)
    status.metadata.SetInParent()
    return status


def _phase_is(pod: Obj, *phases: str) -> bool:
    return pod.status.phase in phases


def can_ignore_budget(pod: Obj) -> bool:
    return _phase_is(pod, "Succeeded", "Failed", "Pending") or pod.metadata.HasField("deletionTimestamp")


def enforces_resource_version(pod: Obj) -> bool:
    return not (_phase_is(pod, "Succeeded", "Failed") or pod.metadata.HasField("deletionTimestamp"))


def is_ready(pod: Obj) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)


def set_disruption_allowed_condition(budget: Obj) -> None:
    """upstream's UpdateDisruptionAllowedCondition (meta.SetStatusCondition of DisruptionAllowed)."""
    allowed = budget.status.disruptionsAllowed > 0
    state, reason = ("True", "SufficientPods") if allowed else ("False", "InsufficientPods")
    conditions = budget.status.conditions
    condition = next((c for c in conditions if c.type == "DisruptionAllowed"), None)
    if condition is None:
        condition = conditions.add(type="DisruptionAllowed")
    if condition.status != state or not condition.HasField("lastTransitionTime"):
        condition.lastTransitionTime.Clear()
        condition.lastTransitionTime.seconds = now_seconds()
    condition.status, condition.reason = state, reason
    condition.observedGeneration = budget.status.observedGeneration


class EvictionStore:
    """Create only, for a named pod; answers with a Success Status."""

    def __init__(self, pods: Store, codec: Codec, budgets: Callable[[], Store | None]) -> None:
        self.pods = pods
        self.codec = codec
        self.budgets = budgets  # the PodDisruptionBudget store, looked up when needed

    def _delete_options(self, eviction: Obj, options: WriteOptions) -> DeleteOptions:
        """The Eviction's DeleteOptions; dry run if either the request or they ask for it."""
        found = DeleteOptions(dry_run_values=DRY_RUN_ALL if options.dry_run else (), user=options.user)
        if eviction.HasField("deleteOptions"):
            found = merged_delete_options(found, eviction.deleteOptions)
        dry_run = DRY_RUN_ALL if found.dry_run or options.dry_run else ()
        return checked_delete_options(dataclasses.replace(found, dry_run_values=dry_run))

    async def create_for(self, namespace: str, name: str, obj: Obj, options: WriteOptions) -> meta.Status:
        if name != obj.metadata.name:
            raise errors.bad_request("name in URL does not match name in Eviction object")
        delete_options = self._delete_options(obj, options)
        rv_unset = delete_options.precondition_resource_version is None
        for attempt in range(ATTEMPTS):
            pod = (await self.pods.get(namespace, name, None)).obj
            if not can_ignore_budget(pod):
                break
            guarded = delete_options
            if enforces_resource_version(pod) and rv_unset:
                guarded = dataclasses.replace(
                    delete_options, precondition_resource_version=pod.metadata.resourceVersion
                )
            try:
                await self.pods.delete(namespace, name, guarded)
            except StatusError as err:
                if err.code != 409 or not rv_unset or attempt == ATTEMPTS - 1:
                    raise
                continue
            return _status("Success")

        matching = await self._budgets_of(namespace, pod)
        if len(matching) > 1:
            return _status("Failure", 500, MORE_THAN_ONE)
        unready_but_healthy = False
        if matching:
            budget = matching[0]
            healthy, desired = budget.status.currentHealthy, budget.status.desiredHealthy
            unready_but_healthy = not is_ready(pod) and healthy >= desired and desired > 0
            if not unready_but_healthy:
                await self._take_disruption(namespace, budget.metadata.name, name, delete_options.dry_run)
        guarded = delete_options
        if unready_but_healthy:
            guarded = dataclasses.replace(delete_options, precondition_resource_version=pod.metadata.resourceVersion)
        try:
            await self.pods.delete(namespace, name, guarded)
        except StatusError as err:
            if err.code == 409 and unready_but_healthy and rv_unset:
                raise still_processing(matching[0].metadata.name) from None
            raise
        return _status("Success")

    async def _budgets_of(self, namespace: str, pod: Obj) -> list[Obj]:
        """The namespace's budgets whose selector matches the pod (an empty or invalid one matches none)."""
        budgets = self.budgets()
        if budgets is None:
            return []
        found = []
        for view in (await budgets.list(namespace, ListOptions())).items:
            selector = budgets.codec.to_dict(view.obj).get("spec", {}).get("selector")
            try:
                parsed = label_selector(label_selector_text(selector))
            except SelectorError:
                continue
            if not parsed.empty and parsed.matches(pod.metadata.labels):
                found.append(view.obj)
        return found

    async def _take_disruption(self, namespace: str, budget_name: str, pod_name: str, dry_run: bool) -> None:
        """Check the budget allows a disruption and record this one (upstream's checkAndDecrement)."""
        budgets = self.budgets()
        assert budgets is not None
        resource = budgets.resource

        def take(current: Obj | None) -> Obj:
            assert current is not None
            budget = budgets.codec.copy(current)
            status = budget.status
            if status.observedGeneration < budget.metadata.generation:
                raise still_processing(budget_name)
            if status.disruptionsAllowed < 0:
                raise errors.forbidden(
                    resource.group, "poddisruptionbudget", budget_name, "pdb disruptions allowed is negative"
                )
            if len(status.disruptedPods) > MAX_DISRUPTED_PODS:
                raise errors.forbidden(
                    resource.group,
                    "poddisruptionbudget",
                    budget_name,
                    "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
                )
            if status.disruptionsAllowed == 0:
                raise too_many_requests(
                    f"The disruption budget {budget_name} needs {status.desiredHealthy} healthy pods "
                    f"and has {status.currentHealthy} currently",
                    0,
                )
            status.disruptionsAllowed -= 1
            if status.disruptionsAllowed == 0:
                set_disruption_allowed_condition(budget)
            status.disruptedPods[pod_name].seconds = now_seconds()
            return budget

        if dry_run:
            take((await budgets.get(namespace, budget_name, None)).obj)
            return
        prepare = budgets.strategy.prepare_for_status_update
        await budgets.guaranteed_update(namespace, budget_name, take, WriteOptions(), prepare, subresource="status")
