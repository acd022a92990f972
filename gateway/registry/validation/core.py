"""core/v1 (k8s.io/kubernetes pkg/apis/core/validation): Pods (create and the few fields an update
may change), PodTemplates, ReplicationControllers, ConfigMaps and Secrets (keys, 1 MiB, immutable),
Namespaces, ServiceAccounts, Nodes, LimitRanges and ResourceQuotas. Services and Endpoints are in
services.py, volumes and claims in persistentvolumes.py."""

from __future__ import annotations

import json

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import (
    MAX_INT32,
    check,
    cidr_errors,
    copy_field,
    enum,
    go_string_map,
    immutable,
    messages_equal,
    nonnegative,
    quantity_text,
    quantity_value,
    spec_diff,
)
from protokube.gateway.registry.validation.meta import finalizers_errors, kube_finalizer_errors
from protokube.gateway.registry.validation.pods import (
    deletion_cost_errors,
    image_whitespace_errors,
    pod_spec_errors,
    pod_template_spec_errors,
    tolerations_errors,
)
from protokube.gateway.registry.validation.resources import (
    container_resource_name_errors,
    is_standard_quota_resource,
    overcommit_allowed,
    quantity_value_errors,
    quota_resource_name_errors,
    quota_scope_applies,
    quota_scope_names,
    resource_name_errors,
)
from protokube.gateway.syntax import config_key_problems, label_value_problems, qualified_name_problems

MAX_CONFIG_SIZE = 1024 * 1024
_CORE = "k8s.io.api.core.v1."
_UPDATABLE_POD_FIELDS = ",".join(
    (
        "`spec.containers[*].image`",
        "`spec.initContainers[*].image`",
        "`spec.activeDeadlineSeconds`",
        "`spec.tolerations` (only additions to existing tolerations)",
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
    )
)


# ---- Pod ------------------------------------------------------------------------------------------
def _pod_metadata_and_spec(pod: Message) -> list[FieldError]:
    """validatePodMetadataAndSpec, without the ObjectMeta rules meta.py applies to every kind."""
    found = deletion_cost_errors(dict(pod.metadata.annotations), "metadata.annotations")
    found += pod_spec_errors(pod.spec, "spec", is_pod=True)
    found += image_whitespace_errors(pod.spec.containers, "spec.containers")
    return found + image_whitespace_errors(pod.spec.initContainers, "spec.initContainers")


def _container_updates(new: list[Message], old: list[Message], field: str) -> tuple[list[FieldError], bool]:
    if len(new) != len(old):
        return [FieldError.forbidden(field, "pod updates may not add or remove containers")], True
    found = []
    for i, container in enumerate(new):
        if not container.image:
            found.append(FieldError.required(f"{field}[{i}].image"))
        if container.image != container.image.strip():
            detail = "must not have leading or trailing whitespace"
            found.append(FieldError.invalid(f"{field}[{i}].image", container.image, detail))
    return found, False


def _only_added_tolerations(new: Message, old: Message) -> list[FieldError]:
    for toleration in old.spec.tolerations:
        matched = False
        for candidate in new.spec.tolerations:
            same = type(toleration)()
            same.CopyFrom(toleration)
            same.ClearField("tolerationSeconds")
            if candidate.HasField("tolerationSeconds"):
                same.tolerationSeconds = candidate.tolerationSeconds
            if messages_equal(same, candidate):
                matched = True
                break
        if not matched:
            detail = "existing toleration can not be modified except its tolerationSeconds"
            return [FieldError.forbidden("spec.tolerations", detail)]
    return tolerations_errors(new.spec.tolerations, "spec.tolerations")


def _pod_update(new: Message, old: Message) -> list[FieldError]:
    """ValidatePodUpdate: only images, activeDeadlineSeconds, added tolerations and removed scheduling
    gates may change."""
    found = _pod_metadata_and_spec(new)
    for field in ("containers", "initContainers"):
        errors, stop = _container_updates(
            list(getattr(new.spec, field)), list(getattr(old.spec, field)), f"spec.{field}"
        )
        found += errors
        if stop:
            return found
    spec, old_spec = new.spec, old.spec
    if spec.HasField("activeDeadlineSeconds"):
        deadline = spec.activeDeadlineSeconds
        if not 0 <= deadline <= MAX_INT32:
            detail = f"must be between 0 and {MAX_INT32}, inclusive"
            return [*found, FieldError.invalid("spec.activeDeadlineSeconds", deadline, detail)]
        if old_spec.HasField("activeDeadlineSeconds") and old_spec.activeDeadlineSeconds < deadline:
            detail = "must be less than or equal to previous value"
            return [*found, FieldError.invalid("spec.activeDeadlineSeconds", deadline, detail)]
    elif old_spec.HasField("activeDeadlineSeconds"):
        detail = "must not update from a positive integer to nil value"
        found.append(FieldError.invalid("spec.activeDeadlineSeconds", None, detail))
    found += _only_added_tolerations(new, old)
    old_gates = {gate.name for gate in old_spec.schedulingGates}
    for i, gate in enumerate(spec.schedulingGates):
        if gate.name not in old_gates:
            detail = f"only deletion is allowed, but found new scheduling gate '{gate.name}'"
            found.append(FieldError.forbidden(f"spec.schedulingGates[{i}].name", detail))
    if messages_equal(spec, old_spec):
        return found
    munged = type(spec)()
    munged.CopyFrom(spec)
    for field in ("containers", "initContainers"):
        for container, before in zip(getattr(munged, field), getattr(old_spec, field), strict=True):
            container.image = before.image
    # ephemeralContainers change only through pods/ephemeralcontainers, which checks them itself
    # (the main resource's strategy keeps the stored ones).
    for field in ("activeDeadlineSeconds", "schedulingGates", "tolerations", "ephemeralContainers"):
        copy_field(munged, old_spec, field)
    grace = "terminationGracePeriodSeconds"
    if (
        old_spec.HasField(grace)
        and old_spec.terminationGracePeriodSeconds < 0
        and munged.terminationGracePeriodSeconds == 1
    ):
        munged.terminationGracePeriodSeconds = old_spec.terminationGracePeriodSeconds
    if not messages_equal(munged, old_spec):
        detail = f"pod updates may not change fields other than {_UPDATABLE_POD_FIELDS}\n{spec_diff(old_spec, munged)}"
        found.append(FieldError.forbidden("spec", detail))
    return found


@validator(_CORE + "Pod")
def validate_pod(pod: Message, old: Message | None) -> list[FieldError]:
    if old is not None:
        return _pod_update(pod, old)
    found = _pod_metadata_and_spec(pod)
    if pod.spec.ephemeralContainers:
        found.append(FieldError.forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if pod.spec.nodeName and pod.spec.schedulingGates:
        found.append(FieldError.forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
    return found


@validator(_CORE + "PodTemplate")
def validate_pod_template(template: Message, old: Message | None) -> list[FieldError]:
    return pod_template_spec_errors(template.template, "template")


# ---- ReplicationController -----------------------------------------------------------------------
@validator(_CORE + "ReplicationController")
def validate_replication_controller(controller: Message, old: Message | None) -> list[FieldError]:
    spec = controller.spec
    found = nonnegative("spec.minReadySeconds", spec.minReadySeconds)
    if not spec.selector:
        found.append(FieldError.required("spec.selector"))
    found += nonnegative("spec.replicas", spec.replicas)
    if not spec.HasField("template"):
        return [*found, FieldError.required("spec.template")]
    template = spec.template
    labels = dict(template.metadata.labels)
    if spec.selector and any(labels.get(k) != v for k, v in spec.selector.items()):
        shown = go_string_map(labels)
        found.append(
            FieldError.invalid("spec.template.metadata.labels", shown, "`selector` does not match template `labels`")
        )
    found += pod_template_spec_errors(template, "spec.template")
    if template.spec.restartPolicy and template.spec.restartPolicy != "Always":
        found.append(
            FieldError.not_supported("spec.template.spec.restartPolicy", template.spec.restartPolicy, ("Always",))
        )
    if template.spec.HasField("activeDeadlineSeconds"):
        detail = "activeDeadlineSeconds in ReplicationController is not Supported"
        found.append(FieldError.forbidden("spec.template.spec.activeDeadlineSeconds", detail))
    return found


# ---- ConfigMap and Secret -------------------------------------------------------------------------
def _immutable_data(new: Message, old: Message, fields: tuple[str, ...]) -> list[FieldError]:
    if not (old.HasField("immutable") and old.immutable):
        return []
    detail = "field is immutable when `immutable` is set"
    found = [] if new.immutable else [FieldError.forbidden("immutable", detail)]
    for field in fields:
        if dict(getattr(new, field)) != dict(getattr(old, field)):
            found.append(FieldError.forbidden(field, detail))
    return found


@validator(_CORE + "ConfigMap")
def validate_config_map(config: Message, old: Message | None) -> list[FieldError]:
    found = [] if old is None else _immutable_data(config, old, ("data", "binaryData"))
    total = 0
    for key in sorted(config.data):
        found += check(f"data[{key}]", key, config_key_problems)
        if key in config.binaryData:
            found.append(FieldError.invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
        total += len(config.data[key].encode())
    for key in sorted(config.binaryData):
        found += check(f"binaryData[{key}]", key, config_key_problems)
        total += len(config.binaryData[key])
    if total > MAX_CONFIG_SIZE:
        found.append(FieldError.too_long("[]", MAX_CONFIG_SIZE))
    return found


# Secret types and the data keys each requires.
_SECRET_REQUIRED_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


def _secret_type_errors(secret: Message) -> list[FieldError]:
    data = secret.data
    kind = secret.type
    if kind == "kubernetes.io/service-account-token":
        if not secret.metadata.annotations.get("kubernetes.io/service-account.name"):
            return [FieldError.required("metadata.annotations[kubernetes.io/service-account.name]")]
        return []
    if kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            return [FieldError.required("data[username]"), FieldError.required("data[password]")]
        return []
    if kind == "kubernetes.io/ssh-auth":
        return [] if data.get("ssh-privatekey") else [FieldError.required("data[ssh-privatekey]")]
    if kind == "kubernetes.io/tls":
        return [FieldError.required(f"data[{key}]") for key in ("tls.crt", "tls.key") if key not in data]
    if kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = _SECRET_REQUIRED_KEYS[kind][0]
        if key not in data:
            return [FieldError.required(f"data[{key}]")]
        try:
            parsed = json.loads(data[key])
        except ValueError as error:
            return [FieldError.invalid(f"data[{key}]", "<secret contents redacted>", _json_error(error))]
        if not isinstance(parsed, dict):
            detail = "json: cannot unmarshal " + _json_kind(parsed) + " into Go value of type map[string]interface {}"
            return [FieldError.invalid(f"data[{key}]", "<secret contents redacted>", detail)]
    return []


def _json_kind(value: object) -> str:
    return {list: "array", str: "string", bool: "bool", type(None): "null"}.get(type(value), "number")


def _json_error(error: ValueError) -> str:
    """encoding/json's wording for the common syntax errors."""
    message = str(error)
    if message.startswith("Expecting value") and "char 0" in message:
        return "unexpected end of JSON input"
    return "invalid character in JSON input"


@validator(_CORE + "Secret")
def validate_secret(secret: Message, old: Message | None) -> list[FieldError]:
    found: list[FieldError] = []
    if old is not None:
        found += immutable("type", secret.type, old.type)
        found += _immutable_data(secret, old, ("data",))
    total = 0
    for key in sorted(secret.data):
        found += check(f"data[{key}]", key, config_key_problems)
        total += len(secret.data[key])
    if total > MAX_CONFIG_SIZE:
        found.append(FieldError.too_long("data", MAX_CONFIG_SIZE))
    return found + _secret_type_errors(secret)


# ---- Namespace, ServiceAccount ---------------------------------------------------------------------
@validator(_CORE + "Namespace")
def validate_namespace(namespace: Message, old: Message | None) -> list[FieldError]:
    found: list[FieldError] = []
    for name in namespace.spec.finalizers:
        found += finalizers_errors([name], "spec.finalizers")
        found += [
            FieldError.invalid("spec.finalizers", error.value, error.detail)
            for error in kube_finalizer_errors([name], "spec.finalizers")
        ]
    return found


# ---- Node -----------------------------------------------------------------------------------------
def taints_errors(taints: list[Message], field: str) -> list[FieldError]:
    """validateNodeTaints: keys, values, effects, unique by key and effect."""
    found: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        where = f"{field}[{i}]"
        found += check(f"{where}.key", taint.key, qualified_name_problems)
        problems = label_value_problems(taint.value)
        if problems:
            found.append(FieldError.invalid(f"{where}.value", taint.value, ";".join(problems)))
        found += enum(f"{where}.effect", taint.effect, ("NoSchedule", "PreferNoSchedule", "NoExecute"), required=True)
        if (taint.key, taint.effect) in seen:
            shown = GoText(
                f'core.Taint{{Key:"{taint.key}", Value:"{taint.value}", Effect:"{taint.effect}", TimeAdded:<nil>}}'
            )
            found.append(
                FieldError("FieldValueDuplicate", where, "taints must be unique by key and effect pair", shown, True)
            )
            continue
        seen.add((taint.key, taint.effect))
    return found


@validator(_CORE + "Node")
def validate_node(node: Message, old: Message | None) -> list[FieldError]:
    found = taints_errors(list(node.spec.taints), "metadata.taints")
    for section in ("capacity", "allocatable"):
        resources = getattr(node.status, section)
        for name in sorted(resources):
            found += quantity_value_errors(name, resources[name].string, f"status.{section}.{name}")
    cidrs = list(node.spec.podCIDRs)
    for i, cidr in enumerate(cidrs):
        found += cidr_errors(f"spec.podCIDRs[{i}]", cidr)
    if len(cidrs) > 1:
        if len(cidrs) > 2 or len({":" in cidr for cidr in cidrs}) != 2:
            detail = "may specify no more than one CIDR for each IP family"
            found.append(FieldError.invalid("spec.podCIDRs", cidrs, detail))
        for i, cidr in enumerate(cidrs):
            if cidr in cidrs[:i]:
                found.append(FieldError.duplicate(f"spec.podCIDRs[{i}]", cidr))
    if old is None:
        return found
    old_cidrs = list(old.spec.podCIDRs)
    if old_cidrs and old_cidrs != cidrs:
        detail = 'node updates may not change podCIDR except from "" to valid'
        changes = 1 if len(old_cidrs) != len(cidrs) else sum(a != b for a, b in zip(old_cidrs, cidrs, strict=True))
        found += [FieldError.forbidden("spec.podCIDRs", detail)] * changes
    if old.spec.providerID and old.spec.providerID != node.spec.providerID:
        detail = 'node updates may not change providerID except from "" to valid'
        found.append(FieldError.forbidden("spec.providerID", detail))
    if node.spec.externalID != old.spec.externalID:
        found.append(FieldError.forbidden("spec.externalID", "may not be updated"))
    return found


# ---- LimitRange -----------------------------------------------------------------------------------
def _limit_type_errors(kind: str, field: str) -> list[FieldError]:
    found = check(field, kind, qualified_name_problems)
    if not found and "/" not in kind and kind not in ("Pod", "Container", "PersistentVolumeClaim"):
        found.append(FieldError.invalid(field, kind, "must be a standard limit type or fully qualified"))
    return found


@validator(_CORE + "LimitRange")
def validate_limit_range(limit_range: Message, old: Message | None) -> list[FieldError]:
    found: list[FieldError] = []
    seen_types: set[str] = set()
    for i, limit in enumerate(limit_range.spec.limits):
        where = f"spec.limits[{i}]"
        found += _limit_type_errors(limit.type, f"{where}.type")
        if limit.type in seen_types:
            found.append(FieldError.duplicate(f"{where}.type", limit.type))
        seen_types.add(limit.type)
        name_check = container_resource_name_errors if limit.type in ("Pod", "Container") else resource_name_errors
        values: dict[str, dict[str, str]] = {}
        sections = ["max", "min"]
        if limit.type == "Pod":
            for section in ("default", "defaultRequest"):
                if getattr(limit, section):
                    found.append(
                        FieldError.forbidden(f"{where}.{section}", "may not be specified when `type` is 'Pod'")
                    )
        else:
            sections += ["default", "defaultRequest"]
        if limit.type == "PersistentVolumeClaim" and "storage" not in limit.min and "storage" not in limit.max:
            detail = "either minimum or maximum storage value is required, but neither was provided"
            found.append(FieldError.required(f"{where}.limits", detail))
        sections.append("maxLimitRequestRatio")
        for section in sections:
            quantities = getattr(limit, section)
            values[section] = {name: quantities[name].string for name in quantities}
            for name in sorted(quantities):
                found += name_check(name, f"{where}.{section}[{name}]")
        found += _limit_range_bounds(values, where)
    return found


def _limit_range_bounds(values: dict[str, dict[str, str]], where: str) -> list[FieldError]:
    """Each resource of a limit: min <= defaultRequest <= default <= max, 1 <= ratio <= max/min."""
    found: list[FieldError] = []
    for key in sorted(set().union(*(section.keys() for section in values.values()))):
        found += _limit_key_errors({section: v.get(key) for section, v in values.items()}, where, key)
    return found


def _limit_key_errors(limit: dict[str, str | None], where: str, key: str) -> list[FieldError]:
    found: list[FieldError] = []
    low, high, ratio = limit["min"], limit["max"], limit["maxLimitRequestRatio"]
    default, request = limit.get("default"), limit.get("defaultRequest")
    q, t = quantity_value, quantity_text

    def add(section: str, shown: str, detail: str) -> None:
        found.append(FieldError.invalid(f"{where}.{section}[{key}]", t(shown), detail))

    if low is not None and high is not None and q(low) > q(high):
        add("min", low, f"min value {t(low)} is greater than max value {t(high)}")
    if request is not None and low is not None and q(low) > q(request):
        add("defaultRequest", request, f"min value {t(low)} is greater than default request value {t(request)}")
    if request is not None and high is not None and q(request) > q(high):
        add("defaultRequest", request, f"default request value {t(request)} is greater than max value {t(high)}")
    if request is not None and default is not None and q(request) > q(default):
        detail = f"default request value {t(request)} is greater than default limit value {t(default)}"
        add("defaultRequest", request, detail)
    if default is not None and low is not None and q(low) > q(default):
        add("default", low, f"min value {t(low)} is greater than default value {t(default)}")
    if default is not None and high is not None and q(default) > q(high):
        add("default", high, f"default value {t(default)} is greater than max value {t(high)}")
    if ratio is not None and q(ratio) < 1:
        add("maxLimitRequestRatio", ratio, f"ratio {t(ratio)} is less than 1")
    if ratio is not None and low is not None and high is not None and q(low) > 0:
        bound = float(q(high) / q(low))
        if float(q(ratio)) > bound:
            add("maxLimitRequestRatio", ratio, f"ratio {t(ratio)} is greater than max/min = {bound:f}")
    if not overcommit_allowed(key) and default is not None and request is not None and q(default) != q(request):
        add(
            "defaultRequest",
            request,
            f"default value {t(default)} must equal to defaultRequest value {t(request)} in {key}",
        )
    return found


# ---- ResourceQuota --------------------------------------------------------------------------------
def _quota_scopes(spec: Message) -> list[FieldError]:
    if not spec.scopes:
        return []
    found: list[FieldError] = []
    scopes = list(spec.scopes)
    hard = sorted(spec.hard)
    for scope in scopes:
        if scope not in quota_scope_names():
            found.append(FieldError.invalid("spec.scopes", scopes, "unsupported scope"))
        for name in hard:
            if is_standard_quota_resource(name) and not quota_scope_applies(scope, name):
                found.append(FieldError.invalid("spec.scopes", scopes, "unsupported scope applied to resource"))
    found += _conflicting_scopes(set(scopes), "spec.scopes", scopes)
    return found


def _conflicting_scopes(scopes: set[str], field: str, shown: object) -> list[FieldError]:
    pairs = ({"BestEffort", "NotBestEffort"}, {"Terminating", "NotTerminating"})
    return [FieldError.invalid(field, shown, "conflicting scopes") for pair in pairs if pair <= scopes]


def _scope_selector(spec: Message) -> list[FieldError]:
    if not spec.HasField("scopeSelector"):
        return []
    field = "spec.scopeSelector.matchExpressions"
    found: list[FieldError] = []
    hard = sorted(spec.hard)
    scopes: set[str] = set()
    pod_scopes = ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating", "CrossNamespacePodAffinity")
    for requirement in spec.scopeSelector.matchExpressions:
        scope = requirement.scopeName
        if scope not in quota_scope_names() and scope not in ("PriorityClass", "CrossNamespacePodAffinity"):
            found.append(FieldError.invalid(f"{field}.scopeName", scope, "unsupported scope"))
        for name in hard:
            if is_standard_quota_resource(name) and not quota_scope_applies(scope, name):
                found.append(
                    FieldError.invalid(
                        field, GoText("&core.ScopeSelector{...}"), "unsupported scope applied to resource"
                    )
                )
        if scope in pod_scopes and requirement.operator != "Exists":
            detail = (
                "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, "
                "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort "
                "or ResourceQuotaScopeCrossNamespacePodAffinity"
            )
            found.append(FieldError.invalid(f"{field}.operator", requirement.operator, detail))
        if requirement.operator in ("In", "NotIn"):
            if not requirement.values:
                detail = "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"
                found.append(FieldError.required(f"{field}.values", detail))
        elif requirement.operator in ("Exists", "DoesNotExist"):
            if requirement.values:
                detail = "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"
                found.append(FieldError.invalid(f"{field}.values", list(requirement.values), detail))
        else:
            found.append(FieldError.invalid(f"{field}.operator", requirement.operator, "not a valid selector operator"))
        scopes.add(scope)
    return found + _conflicting_scopes(scopes, field, list(spec.scopes))


@validator(_CORE + "ResourceQuota")
def validate_resource_quota(quota: Message, old: Message | None) -> list[FieldError]:
    found: list[FieldError] = []
    for name in sorted(quota.spec.hard):
        path = f"spec.hard[{name}]"
        found += quota_resource_name_errors(name, path) + quantity_value_errors(
            name, quota.spec.hard[name].string, path
        )
    found += _quota_scopes(quota.spec) + _scope_selector(quota.spec)
    if old is None:
        for section in ("hard", "used"):
            resources = getattr(quota.status, section)
            for name in sorted(resources):
                path = f"status.{section}[{name}]"
                found += quota_resource_name_errors(name, path) + quantity_value_errors(
                    name, resources[name].string, path
                )
    elif set(quota.spec.scopes) != set(old.spec.scopes):
        found.append(FieldError.invalid("spec.scopes", list(quota.spec.scopes), "field is immutable"))
    return found
