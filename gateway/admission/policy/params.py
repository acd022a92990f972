"""The params a binding evaluates its policy with (upstream's generic.CollectParams): none asked
(no paramKind, or a binding without paramRef) is one evaluation with ``params`` null; otherwise
the object paramRef names, or every object its selector selects, read from the param kind's watch
cache — in paramRef's namespace, else the request's for a namespaced kind. None found is no
evaluation, or a configuration error with parameterNotFoundAction Deny. A paramKind that is not
served is the policy's configuration error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protokube.gateway.admission.policy.compiled import Binding, Policy
from protokube.gateway.registry.admission import Attributes
from protokube.gateway.watchcache.cacher import Cacher
from protokube.schema.registry import GroupVersionKind, Registry, Resource


class ConfigurationError(Exception):
    """The binding cannot be evaluated (upstream: failed to configure binding: ...)."""


def param_resource(policy: Policy, registry: Registry) -> Resource | None:
    """The resource of the policy's paramKind (None: none asked, or not served)."""
    if policy.param_kind is None:
        return None
    api_version, kind = policy.param_kind
    group, _, version = api_version.rpartition("/")
    return registry.resource_for_kind(GroupVersionKind(group, version, kind))


def unknown_param_kind(policy: Policy, registry: Registry, cachers: Mapping[tuple[str, str, str], Cacher]) -> str:
    """upstream's configuration error of a policy whose paramKind is not served ("" when it is)."""
    if policy.param_kind is None:
        return ""
    resource = param_resource(policy, registry)
    if resource is not None and resource.key in cachers:
        return ""
    api_version, kind = policy.param_kind
    group, _, version = api_version.rpartition("/")
    return f"failed to find resource referenced by paramKind: '{group}/{version}, Kind={kind}'"


def collect(
    policy: Policy,
    binding: Binding,
    attributes: Attributes,
    registry: Registry,
    cachers: Mapping[tuple[str, str, str], Cacher],
) -> list[dict[str, Any] | None]:
    """The params objects (as JSON) to evaluate with; raises ConfigurationError."""
    ref = binding.param_ref
    resource = param_resource(policy, registry)
    if ref is None or resource is None:  # no paramKind, or a binding without paramRef: params is null
        return [None]
    cacher = cachers[resource.key]  # unknown_param_kind made sure there is one
    namespace = ""
    if resource.namespaced:
        namespace = ref.namespace or attributes.namespace
        if not namespace:
            raise ConfigurationError(
                "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
            )
    cache = cacher.cache
    if ref.name:
        entry = cache.get(namespace, ref.name) if cache.ready.is_set() else None
        found = [entry] if entry is not None else []
    elif ref.selector is not None:
        found = [e for e in cache.entries(namespace) if ref.selector.matches(e.labels)] if cache.ready.is_set() else []
    else:
        raise ConfigurationError("one of name or selector must be provided")
    if not found and ref.deny_when_missing:
        raise ConfigurationError("no params found for policy binding with `Deny` parameterNotFoundAction")
    return [entry.view.codec.to_dict(entry.view.obj) for entry in found]
