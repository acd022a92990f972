"""PodSecurity's configuration: the PodSecurityConfiguration of the AdmissionConfiguration
(pod-security.admission.config.k8s.io/v1, v1beta1 or v1alpha1): the default level and version of
each mode for namespaces without labels, and the exempt usernames, runtime classes and
namespaces. Without one, every default is privileged:latest and nothing is exempt (as upstream:
no namespace, kube-system included, is exempt by default)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protokube.gateway.admission.podsecurity.levels import (
    LATEST,
    LEVEL_ERROR,
    PRIVILEGED,
    VERSION_ERROR,
    LevelVersion,
    Policy,
    Version,
    parse_level,
    parse_version,
)
from protokube.gateway.errors import FieldError, aggregate
from protokube.gateway.syntax import dns1123_label_problems, dns1123_subdomain_problems

GROUP = "pod-security.admission.config.k8s.io"
API_VERSIONS = (f"{GROUP}/v1", f"{GROUP}/v1beta1", f"{GROUP}/v1alpha1")
KIND = "PodSecurityConfiguration"
VALIDATION_ORDER = ("enforce", "warn", "audit")  # the order of upstream's errors (and of the exemptions')


class ConfigurationError(ValueError):
    """The configuration cannot be used; the server does not start."""


@dataclass(frozen=True)
class PodSecurityConfiguration:
    defaults: Policy = field(default_factory=Policy)
    usernames: frozenset[str] = field(default_factory=frozenset)
    namespaces: frozenset[str] = field(default_factory=frozenset)
    runtime_classes: frozenset[str] = field(default_factory=frozenset)


def parse(raw: Any) -> PodSecurityConfiguration:
    """The configuration (the AdmissionConfiguration's entry for PodSecurity; None: the defaults)."""
    if raw is None:
        return PodSecurityConfiguration()
    if not isinstance(raw, dict):
        raise ConfigurationError(f"PodSecurity configuration error: expected {KIND}, got {type(raw).__name__}")
    if raw.get("kind") != KIND or raw.get("apiVersion") not in API_VERSIONS:
        raise ConfigurationError(
            f"PodSecurity configuration error: expected {KIND} of {', '.join(API_VERSIONS)}, "
            f"got kind {raw.get('kind')!r} of apiVersion {raw.get('apiVersion')!r}"
        )
    defaults = _section(raw, "defaults")
    exemptions = _section(raw, "exemptions")
    errors: list[FieldError] = []
    modes = {mode: _mode(defaults, mode, errors) for mode in VALIDATION_ORDER}
    namespaces = _exempt(exemptions, "namespaces", dns1123_label_problems, errors)
    runtime_classes = _exempt(exemptions, "runtimeClasses", dns1123_subdomain_problems, errors)
    usernames = _exempt(exemptions, "usernames", _username_problems, errors)
    if errors:
        raise ConfigurationError(f"PodSecurity invalid: {aggregate(errors)}")
    return PodSecurityConfiguration(Policy(**modes), usernames, namespaces, runtime_classes)


def _section(raw: dict[str, Any], name: str) -> dict[str, Any]:
    section = raw.get(name) or {}
    if not isinstance(section, dict):
        raise ConfigurationError(f"PodSecurity configuration error: {name} must be an object")
    return section


def _text(section: dict[str, Any], key: str, where: str) -> str:
    value = section.get(key) or ""
    if not isinstance(value, str):
        raise ConfigurationError(f"PodSecurity configuration error: {where} must be a string")
    return value


def _mode(defaults: dict[str, Any], mode: str, errors: list[FieldError]) -> LevelVersion:
    """A mode's default (privileged and latest where unset)."""
    level_text = _text(defaults, mode, f"defaults.{mode}") or PRIVILEGED
    version_text = _text(defaults, f"{mode}-version", f"defaults.{mode}-version") or LATEST
    level, version = parse_level(level_text), parse_version(version_text)
    if level is None:
        errors.append(FieldError.invalid(f"defaults.{mode}", level_text, LEVEL_ERROR))
    if version is None:
        errors.append(FieldError.invalid(f"defaults.{mode}-version", version_text, VERSION_ERROR))
    return LevelVersion(level or PRIVILEGED, version or Version())


def _username_problems(name: str) -> list[str]:
    return [] if name else ["username must not be empty"]


def _exempt(
    exemptions: dict[str, Any], key: str, problems_of: Callable[[str], list[str]], errors: list[FieldError]
) -> frozenset[str]:
    """The valid, distinct names of ``exemptions.<key>``; the others' errors go to ``errors``."""
    names = exemptions.get(key) or []
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ConfigurationError(f"PodSecurity configuration error: exemptions.{key} must be a list of strings")
    seen: set[str] = set()
    for index, name in enumerate(names):
        where = f"exemptions.{key}[{index}]"
        problems = problems_of(name)
        if problems:
            errors.append(FieldError.invalid(where, name, ", ".join(problems)))
        elif name in seen:
            errors.append(FieldError.duplicate(where, name))
        else:
            seen.add(name)
    return frozenset(seen)
