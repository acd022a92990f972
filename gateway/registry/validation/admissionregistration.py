"""admissionregistration.k8s.io/v1 webhook configurations (k8s.io/kubernetes pkg/apis/
admissionregistration/validation): unique, fully qualified webhook names; rules; policies; side
effects; timeouts; matchConditions (CEL: gateway/admission/webhook/conditions.py); admission review
versions; a client config with exactly one of url or service."""

from __future__ import annotations

from urllib.parse import urlsplit

from google.protobuf.message import Message

from protokube.gateway.admission.webhook import conditions
from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import (
    fully_qualified_name_errors,
    go_string_slice,
    invalid_each,
    label_selector_errors,
)
from protokube.gateway.syntax import dns1035_label_problems, dns1123_subdomain_problems, port_number_problems

_ADMISSION = "k8s.io.api.admissionregistration.v1."
OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
SCOPES = ("*", "Cluster", "Namespaced")
REVIEW_VERSIONS = ("v1", "v1beta1")
_URL_FORM = "; desired format: https://host[/path]"


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


def _rule(rule: Message, field: str) -> list[FieldError]:
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


def _url(field: str, text: str) -> list[FieldError]:
    try:
        url = urlsplit(text)
    except ValueError as error:
        return [FieldError.required(field, f"url must be a valid URL: {error}{_URL_FORM}")]
    found = []
    if url.scheme != "https":
        found.append(FieldError.invalid(field, url.scheme, f"'https' is the only allowed URL scheme{_URL_FORM}"))
    host = url.netloc.rpartition("@")[2]
    if not host:
        found.append(FieldError.invalid(field, host, f"host must be specified{_URL_FORM}"))
    if "@" in url.netloc:
        found.append(
            FieldError.invalid(field, url.netloc.rpartition("@")[0], "user information is not permitted in the URL")
        )
    if url.fragment:
        found.append(FieldError.invalid(field, url.fragment, "fragments are not permitted in the URL"))
    if url.query:
        found.append(FieldError.invalid(field, url.query, "query parameters are not permitted in the URL"))
    return found


def _service(service: Message, field: str) -> list[FieldError]:
    found = [] if service.name else [FieldError.required(f"{field}.name", "service name is required")]
    if not service.namespace:
        found.append(FieldError.required(f"{field}.namespace", "service namespace is required"))
    port = service.port if service.HasField("port") else 443
    problems = port_number_problems(port)
    if problems:
        found.append(FieldError.invalid(f"{field}.port", port, "port is not valid: " + ", ".join(problems)))
    if not service.HasField("path") or service.path in ("", "/"):
        return found
    path = service.path
    if path == "//":
        return [*found, FieldError.invalid(f"{field}.path", path, "segment[0] may not be empty")]
    if not path.startswith("/"):
        found.append(FieldError.invalid(f"{field}.path", path, "must start with a '/'"))
    for i, step in enumerate(path[1:].removesuffix("/").split("/")):
        if not step:
            found.append(FieldError.invalid(f"{field}.path", path, f"segment[{i}] may not be empty"))
            continue
        found += [
            FieldError.invalid(f"{field}.path", path, f"segment[{i}]: {p}") for p in dns1123_subdomain_problems(step)
        ]
    return found


def review_versions(versions: list[str], field: str, required: str) -> list[FieldError]:
    """An AdmissionReview's or ConversionReview's versions (validateAdmissionReviewVersions,
    validateConversionReviewVersions): one of v1 and v1beta1 at least, no duplicates, DNS labels;
    ``required``: the detail when there are none."""
    if not versions:
        return [FieldError.required(field, required)]
    found: list[FieldError] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            found.append(FieldError.invalid(f"{field}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        found += invalid_each(f"{field}[{i}]", version, dns1035_label_problems(version))
    if not seen & set(REVIEW_VERSIONS):
        detail = "must include at least one of " + ", ".join(REVIEW_VERSIONS)
        found.append(FieldError.invalid(field, GoText(go_string_slice(versions)), detail))
    return found


def _webhook(hook: Message, field: str, mutating: bool) -> list[FieldError]:
    found = fully_qualified_name_errors(f"{field}.name", hook.name)
    for i, rule in enumerate(hook.rules):
        found += _rule(rule, f"{field}.rules[{i}]")
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
        found += _url(f"{field}.clientConfig.url", config.url)
    else:
        found += _service(config.service, f"{field}.clientConfig.service")
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
