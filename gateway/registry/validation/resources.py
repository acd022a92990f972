"""Resource names and quantities (core's helper and validation): what a container, a quota or a
limit range may name, request <= limit, integer-only resources, non-negative quantities.

Go prints a ``resource.Quantity`` passed by value with %#v; these errors show the quantity's
string instead (the only part of that dump a client can act on).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError
from protokube.gateway.registry.validation.common import check, nonnegative_quantity, quantity_text, quantity_value
from protokube.gateway.syntax import qualified_name_problems

HUGEPAGES_PREFIX = "hugepages-"
_STANDARD_CONTAINER = frozenset({"cpu", "memory", "ephemeral-storage"})
_COUNTED = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_STANDARD = _STANDARD_CONTAINER | _COUNTED
_STANDARD |= {f"{kind}.{name}" for kind in ("requests", "limits") for name in _STANDARD_CONTAINER}
_STANDARD |= {"storage", "requests.storage"}
_STANDARD_QUOTA = (_STANDARD - {"storage"}) | {"requests.storage"}
_QUOTA_SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort")

ResourceNameCheck = Callable[[str, str], list[FieldError]]


def is_huge_pages(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def _is_quota_huge_pages(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX) or name.startswith("requests.hugepages-")


def is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    if is_native(name) or name.startswith("requests."):
        return False
    return not qualified_name_problems("requests." + name)


def overcommit_allowed(name: str) -> bool:
    return is_native(name) and not is_huge_pages(name)


def is_integer_resource(name: str) -> bool:
    return name in _COUNTED or is_extended(name)


def resource_name_errors(name: str, field: str) -> list[FieldError]:
    """validateResourceName: a qualified name; without a domain, a standard resource."""
    found = check(field, name, qualified_name_problems)
    if found:
        return found
    if "/" not in name and not (name in _STANDARD or _is_quota_huge_pages(name)):
        return [FieldError.invalid(field, name, "must be a standard resource type or fully qualified")]
    return []


def container_resource_name_errors(name: str, field: str) -> list[FieldError]:
    """validateContainerResourceName: cpu, memory, ephemeral-storage, hugepages-* or an extended resource."""
    found = resource_name_errors(name, field)
    if "/" not in name:
        if not (name in _STANDARD_CONTAINER or is_huge_pages(name)):
            found.append(FieldError.invalid(field, name, "must be a standard resource for containers"))
    elif not is_native(name) and not is_extended(name):
        found.append(FieldError.invalid(field, name, "doesn't follow extended resource name standard"))
    return found


def quota_resource_name_errors(name: str, field: str) -> list[FieldError]:
    found = resource_name_errors(name, field)
    if "/" not in name and not (name in _STANDARD_QUOTA or _is_quota_huge_pages(name)):
        found.append(FieldError.invalid(field, name, "must be a standard resource for quota"))
    return found


def quantity_value_errors(name: str, text: str, field: str) -> list[FieldError]:
    """ValidateResourceQuantityValue: not negative; whole numbers for counted and extended resources."""
    found = nonnegative_quantity(field, text)
    if is_integer_resource(name) and math.ceil(quantity_value(text) * 1000) % 1000:
        found.append(FieldError.invalid(field, quantity_text(text), "must be an integer"))
    return found


def _huge_page_problem(name: str, text: str) -> str | None:
    """A huge pages quantity must be a whole multiple of the page size in its name."""
    size = quantity_value(name.removeprefix(HUGEPAGES_PREFIX)) if name.startswith(HUGEPAGES_PREFIX) else 0
    value = quantity_value(text)
    if size <= 0 or value % size:
        return f"{quantity_text(text)} is not positive integer multiple of {name}"
    return None


def requirements_errors(
    requirements: Message, field: str, name_check: ResourceNameCheck = container_resource_name_errors
) -> list[FieldError]:
    """validateResourceRequirements: names, quantities, requests <= limits, huge pages with cpu or memory."""
    found: list[FieldError] = []
    limits: Mapping[str, Message] = requirements.limits
    requests: Mapping[str, Message] = requirements.requests
    lim_cpu_memory = req_cpu_memory = lim_huge = req_huge = False
    for name in sorted(limits):
        text = limits[name].string
        path = f"{field}.limits[{name}]"
        found += name_check(name, path)
        found += quantity_value_errors(name, text, path)
        if is_huge_pages(name):
            lim_huge = True
            if (problem := _huge_page_problem(name, text)) is not None:
                found.append(FieldError.invalid(path, quantity_text(text), problem))
        lim_cpu_memory |= name in ("cpu", "memory")
    for name in sorted(requests):
        text = requests[name].string
        path = f"{field}.requests[{name}]"
        found += name_check(name, path)
        found += quantity_value_errors(name, text, path)
        if name in limits:
            limit = limits[name].string
            if quantity_value(text) != quantity_value(limit) and not overcommit_allowed(name):
                detail = f"must be equal to {name} limit of {quantity_text(limit)}"
                found.append(FieldError.invalid(f"{field}.requests", quantity_text(text), detail))
            elif quantity_value(text) > quantity_value(limit):
                detail = f"must be less than or equal to {name} limit of {quantity_text(limit)}"
                found.append(FieldError.invalid(f"{field}.requests", quantity_text(text), detail))
        elif not overcommit_allowed(name):
            detail = "Limit must be set for non overcommitable resources"
            found.append(FieldError.required(f"{field}.limits", detail))
        if is_huge_pages(name):
            req_huge = True
            if (problem := _huge_page_problem(name, text)) is not None:
                found.append(FieldError.invalid(path, quantity_text(text), problem))
        req_cpu_memory |= name in ("cpu", "memory")
    if not lim_cpu_memory and not req_cpu_memory and (req_huge or lim_huge):
        found.append(FieldError.forbidden(field, "HugePages require cpu or memory"))
    return found


def quota_scope_names() -> tuple[str, ...]:
    return _QUOTA_SCOPES


def quota_scope_applies(scope: str, resource: str) -> bool:
    """IsResourceQuotaScopeValidForResource."""
    pod_compute = {"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"}
    if scope in ("Terminating", "NotTerminating", "NotBestEffort"):
        return resource == "pods" or resource in pod_compute
    if scope == "BestEffort":
        return resource == "pods"
    return True


def is_standard_quota_resource(name: str) -> bool:
    return name in _STANDARD_QUOTA or _is_quota_huge_pages(name)
