"""ResourceQuota's configuration: the ResourceQuotaConfiguration of the AdmissionConfiguration
(apiserver.config.k8s.io/v1; resourcequota.admission.k8s.io/v1beta1 and v1alpha1 Configuration).
Its ``limitedResources`` make consumption limited by default: an object of such a resource that
consumes a resource name containing one of ``matchContains``, or that matches one of
``matchScopes``, is admitted only when a quota covers it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from protokube.gateway.admission.resourcequota.evaluators import Scope

KINDS = (
    ("apiserver.config.k8s.io/v1", "ResourceQuotaConfiguration"),
    ("resourcequota.admission.k8s.io/v1beta1", "Configuration"),
    ("resourcequota.admission.k8s.io/v1alpha1", "Configuration"),
)


class ConfigurationError(ValueError):
    """The configuration cannot be used; the server does not start."""


@dataclass(frozen=True)
class LimitedResource:
    group: str
    resource: str
    match_contains: tuple[str, ...] = ()
    match_scopes: tuple[Scope, ...] = ()


def _strings(value: Any, field: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigurationError(f"ResourceQuota configuration error: {field} must be a list of strings")
    return tuple(value)


def _limited(index: int, raw: Any) -> LimitedResource:
    field = f"limitedResources[{index}]"
    if not isinstance(raw, dict):
        raise ConfigurationError(f"ResourceQuota configuration error: {field} must be an object")
    resource = raw.get("resource") or ""
    if not resource:
        raise ConfigurationError(f"{field}.resource: Required value")
    scopes = []
    for position, scope in enumerate(raw.get("matchScopes") or []):
        if not isinstance(scope, dict) or not scope.get("scopeName") or not scope.get("operator"):
            raise ConfigurationError(
                f"ResourceQuota configuration error: {field}.matchScopes[{position}] needs a scopeName and an operator"
            )
        values = _strings(scope.get("values"), f"{field}.matchScopes[{position}].values")
        scopes.append(Scope(scope["scopeName"], scope["operator"], values))
    return LimitedResource(
        str(raw.get("apiGroup") or ""),
        str(resource),
        _strings(raw.get("matchContains"), f"{field}.matchContains"),
        tuple(scopes),
    )


def parse(raw: Any) -> tuple[LimitedResource, ...]:
    """The limited resources (the AdmissionConfiguration's entry for ResourceQuota; None: none)."""
    if raw is None:
        return ()
    if not isinstance(raw, dict) or (raw.get("apiVersion"), raw.get("kind")) not in KINDS:
        got = (raw.get("apiVersion"), raw.get("kind")) if isinstance(raw, dict) else type(raw).__name__
        raise ConfigurationError(f"ResourceQuota configuration error: expected ResourceQuotaConfiguration, got {got}")
    limited = raw.get("limitedResources") or []
    if not isinstance(limited, list):
        raise ConfigurationError("ResourceQuota configuration error: limitedResources must be a list")
    return tuple(_limited(index, item) for index, item in enumerate(limited))
