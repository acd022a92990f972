"""admissionregistration.k8s.io/v1 webhook configurations (k8s.io/kubernetes pkg/apis/
admissionregistration/validation): unique, fully qualified webhook names; rules; policies; side
effects; timeouts; matchConditions, compiled with CEL (conditions.py); admission review versions; a
client config with exactly one of url or service (registry/validation/webhookclient.py).

Registered into registry/validation's table by the composition root (gateway/app.py): these rules
compile CEL, which the generic store below admission does not import."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.admission.webhook import conditions
from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import (
    fully_qualified_name_errors,
    go_string_slice,
    label_selector_errors,
)
from protokube.gateway.registry.validation.webhookclient import (
    REVIEW_VERSIONS,
    review_versions,
    service_errors,
    url_errors,
)

_ADMISSION = "k8s.io.api.admissionregistration.v1."
OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
SCOPES = ("*", "Cluster", "Namespaced")


def _wildcard_list(values: list[str], field: str, what: str) -> list[FieldError]:
    if len(values) > 1 and "*" in values:
        return [
            FieldError.invalid(
                field, GoText(go_string_slice(values)), f"if '*' is present, must not specify other {what}"
            )
        ]
    return []


def _resources(resources: list[str], field: str) -> list[FieldError]:
    found = [] if resources else [FieldError.required(field)]
    wildcard_subresources: set[str] = set()
    wildcard_resources: set[str] = set()
    double = single = plain = False
    for i, entry in enumerate(resources):
        if not entry:
            found.append(FieldError.required(f"{field}[{i}]"))
            continue
        double |= entry == "*/*"
        single |= entry == "*"
        resource, slash, sub = entry.partition("/")
        if not slash:
            plain = entry != "*"
            continue
        if resource in wildcard_subresources:
            found.append(
                FieldError.invalid(f"{field}[{i}]", entry, f"if '{resource}/*' is present, must not specify {entry}")
            )
        if sub in wildcard_resources:
            found.append(
                FieldError.invalid(f"{field}[{i}]", entry, f"if '*/{sub}' is present, must not specify {entry}")
            )
        if sub == "*":
            wildcard_subresources.add(resource)
        if resource == "*":
            wildcard_resources.add(sub)
    shown = GoText(go_string_slice(resources))
    if len(resources) > 1 and double:
        found.append(FieldError.invalid(field, shown, "if '*/*' is present, must not specify other resources"))
    if single and plain:
        found.append(
            FieldError.invalid(field, shown, "if '*' is present, must not specify other resources without subresources")
        )
    return found


def rule_errors(rule: Message, field: str) -> list[FieldError]:
    operations = list(rule.operations)
    found = [] if operations else [FieldError.required(f"{field}.operations")]
    found += _wildcard_list(operations, f"{field}.operations", "operations")
    for i, operation in enumerate(operations):
        if operation not in OPERATIONS:
            found.append(FieldError.not_supported(f"{field}.operations[{i}]", operation, OPERATIONS))
    inner = rule.rule
    groups, versions = list(inner.apiGroups), list(inner.apiVersions)
    if not groups:
        found.append(FieldError.required(f"{field}.apiGroups"))
    found += _wildcard_list(groups, f"{field}.apiGroups", "API groups")
    if not versions:
        found.append(FieldError.required(f"{field}.apiVersions"))
    found += _wildcard_list(versions, f"{field}.apiVersions", "API versions")
    found += [FieldError.required(f"{field}.apiVersions[{i}]") for i, version in enumerate(versions) if not version]
    found += _resources(list(inner.resources), f"{field}.resources")
    if inner.HasField("scope") and inner.scope not in SCOPES:
        found.append(FieldError.not_supported(f"{field}.scope", inner.scope, SCOPES))
    return found


def _webhook(hook: Message, field: str, mutating: bool) -> list[FieldError]:
    found = fully_qualified_name_errors(f"{field}.name", hook.name)
    for i, rule in enumerate(hook.rules):
        found += rule_errors(rule, f"{field}.rules[{i}]")
    if hook.HasField("failurePolicy") and hook.failurePolicy not in ("Fail", "Ignore"):
        found.append(FieldError.not_supported(f"{field}.failurePolicy", hook.failurePolicy, ("Fail", "Ignore")))
    if hook.HasField("matchPolicy") and hook.matchPolicy not in ("Equivalent", "Exact"):
        found.append(FieldError.not_supported(f"{field}.matchPolicy", hook.matchPolicy, ("Equivalent", "Exact")))
    if not hook.HasField("sideEffects"):
        found.append(FieldError.required(f"{field}.sideEffects", "must specify one of None, NoneOnDryRun"))
    elif hook.sideEffects not in ("None", "NoneOnDryRun"):
        found.append(FieldError.not_supported(f"{field}.sideEffects", hook.sideEffects, ("None", "NoneOnDryRun")))
    if hook.HasField("timeoutSeconds") and not 1 <= hook.timeoutSeconds <= 30:
        detail = "the timeout value must be between 1 and 30 seconds"
        found.append(FieldError.invalid(f"{field}.timeoutSeconds", hook.timeoutSeconds, detail))
    for name in ("namespaceSelector", "objectSelector"):
        if hook.HasField(name):
            found += label_selector_errors(getattr(hook, name), f"{field}.{name}")
    found += conditions.validation_errors(hook.matchConditions, f"{field}.matchConditions")
    if mutating and hook.HasField("reinvocationPolicy") and hook.reinvocationPolicy not in ("IfNeeded", "Never"):
        found.append(
            FieldError.not_supported(f"{field}.reinvocationPolicy", hook.reinvocationPolicy, ("IfNeeded", "Never"))
        )
    config = hook.clientConfig
    if config.HasField("url") == config.HasField("service"):
        found.append(FieldError.required(f"{field}.clientConfig", "exactly one of url or service is required"))
    elif config.HasField("url"):
        found += url_errors(f"{field}.clientConfig.url", config.url)
    else:
        found += service_errors(config.service, f"{field}.clientConfig.service")
    required = "must specify one of " + ", ".join(REVIEW_VERSIONS)
    return found + review_versions(list(hook.admissionReviewVersions), f"{field}.admissionReviewVersions", required)


def _configuration(configuration: Message, mutating: bool) -> list[FieldError]:
    found: list[FieldError] = []
    names: set[str] = set()
    for i, hook in enumerate(configuration.Webhooks):
        found += _webhook(hook, f"webhooks[{i}]", mutating)
        if hook.name and hook.name in names:
            found.append(FieldError.duplicate(f"webhooks[{i}].name", hook.name))
        names.add(hook.name)
    return found


@validator(_ADMISSION + "ValidatingWebhookConfiguration")
def validate_validating_webhooks(configuration: Message, old: Message | None) -> list[FieldError]:
    return _configuration(configuration, mutating=False)


@validator(_ADMISSION + "MutatingWebhookConfiguration")
def validate_mutating_webhooks(configuration: Message, old: Message | None) -> list[FieldError]:
    return _configuration(configuration, mutating=True)
