"""apiextensions.k8s.io/v1 CustomResourceDefinitions (k8s.io/apiextensions-apiserver
pkg/apis/apiextensions/validation/validation.go): the name is plural.group, names are DNS labels,
exactly one storage version, a structural schema per version, conversion (a webhook's client
configuration and review versions), printer columns and scale paths.

Registered into registry/validation's table by the composition root (gateway/app.py): the structural
schema checks (schema/) compile the schema's CEL rules, which the generic store does not import."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from protokube.gateway.apiextensions.schema import structural_errors
from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import invalid_each
from protokube.gateway.registry.validation.webhookclient import review_versions, service_errors, url_errors
from protokube.gateway.syntax import dns1035_label_problems, dns1123_subdomain_problems
from protokube.schema import jsonencode

CRD = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
SCOPES = ("Cluster", "Namespaced")
CONVERSIONS = ("None", "Webhook")
COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
APPROVAL = "api-approved.kubernetes.io"
PROTECTED_SUFFIXES = (".k8s.io", ".kubernetes.io")


@validator(CRD)
def custom_resource_definition(obj: Message, old: Message | None) -> list[FieldError]:
    crd = jsonencode.to_dict(obj)
    spec, meta = crd.get("spec") or {}, crd.get("metadata") or {}
    group, names = spec.get("group") or "", spec.get("names") or {}
    found: list[FieldError] = []
    plural = names.get("plural") or ""
    if meta.get("name") != f"{plural}.{group}":
        found.append(
            FieldError.invalid("metadata.name", meta.get("name", ""), 'must be spec.names.plural+"."+spec.group')
        )
    found += _group(group, meta.get("annotations") or {})
    found += _names(names)
    scope = spec.get("scope") or ""
    if not scope:
        found.append(FieldError.required("spec.scope", ""))
    elif scope not in SCOPES:
        found.append(FieldError.not_supported("spec.scope", scope, SCOPES))
    old_spec = (jsonencode.to_dict(old).get("spec") or {}) if old is not None else {}
    found += _versions(spec.get("versions") or [], _schemas(old_spec))
    found += _conversion(spec, obj.spec.conversion.webhook.clientConfig)
    if old is not None:
        old_scope = old_spec.get("scope")
        if old_scope and scope != old_scope:
            found.append(FieldError.invalid("spec.scope", scope, "field is immutable"))
    return found


def _group(group: str, annotations: dict[str, str]) -> list[FieldError]:
    if not group:
        return [FieldError.required("spec.group", "")]
    found = invalid_each("spec.group", group, dns1123_subdomain_problems(group))
    if "." not in group:
        found.append(FieldError.invalid("spec.group", group, "should be a domain with at least one dot"))
    protected = group in ("k8s.io", "kubernetes.io") or group.endswith(PROTECTED_SUFFIXES)
    if protected and APPROVAL not in annotations:
        found.append(
            FieldError.required(
                f"metadata.annotations[{APPROVAL}]",
                f'protected groups must have approval annotation "{APPROVAL}", '
                "see https://github.com/kubernetes/enhancements/pull/1111",
            )
        )
    return found


def _names(names: dict[str, Any]) -> list[FieldError]:
    found: list[FieldError] = []
    for key in ("plural", "singular"):
        value = names.get(key) or ""
        if not value:
            found.append(FieldError.required(f"spec.names.{key}", ""))
        elif problems := dns1035_label_problems(value):
            found.append(FieldError.invalid(f"spec.names.{key}", value, ",".join(problems)))
    kind, list_kind = names.get("kind") or "", names.get("listKind") or ""
    for key, value in (("kind", kind), ("listKind", list_kind)):
        if not value:
            found.append(FieldError.required(f"spec.names.{key}", ""))
        elif problems := dns1035_label_problems(value.lower()):
            detail = "may have mixed case, but should otherwise match: " + ",".join(problems)
            found.append(FieldError.invalid(f"spec.names.{key}", value, detail))
    if kind and kind == list_kind:
        found.append(FieldError.invalid("spec.names.listKind", list_kind, "kind and listKind may not be the same"))
    for key in ("shortNames", "categories"):
        for i, value in enumerate(names.get(key) or ()):
            if problems := dns1035_label_problems(value):
                found.append(FieldError.invalid(f"spec.names.{key}[{i}]", value, ",".join(problems)))
    return found


def _schemas(spec: dict[str, Any]) -> dict[str, Any]:
    """Each version's openAPIV3Schema, by version name."""
    return {v.get("name"): (v.get("schema") or {}).get("openAPIV3Schema") for v in spec.get("versions") or ()}


def _versions(versions: list[dict[str, Any]], old_schemas: dict[str, Any]) -> list[FieldError]:
    """``old_schemas``: the stored CRD's (an update), whose unchanged versions keep rules that cost
    more than one expression may now (upstream's suppressPerExpressionCost)."""
    if not versions:
        return [
            FieldError.invalid("spec.versions", GoText("[]"), "must have exactly one version marked as storage version")
        ]
    found: list[FieldError] = []
    if sum(1 for v in versions if v.get("storage")) != 1:
        shown = GoText("[" + ", ".join(v.get("name", "") for v in versions) + "]")
        found.append(
            FieldError.invalid("spec.versions", shown, "must have exactly one version marked as storage version")
        )
    seen: set[str] = set()
    for i, version in enumerate(versions):
        where, name = f"spec.versions[{i}]", version.get("name") or ""
        if not name:
            found.append(FieldError.required(f"{where}.name", ""))
        elif problems := dns1035_label_problems(name):
            found.append(FieldError.invalid(f"{where}.name", name, ",".join(problems)))
        elif name in seen:
            found.append(FieldError.invalid(f"{where}.name", name, "must be unique"))
        seen.add(name)
        props = (version.get("schema") or {}).get("openAPIV3Schema")
        if not props:
            found.append(FieldError.required(f"{where}.schema.openAPIV3Schema", "schemas are required"))
        else:
            unchanged = old_schemas.get(name) == props
            found += structural_errors(props, f"{where}.schema.openAPIV3Schema", expression_costs=not unchanged)
        found += _columns(version.get("additionalPrinterColumns") or [], where)
        scale = (version.get("subresources") or {}).get("scale")
        if scale is not None:
            found += _scale(scale, f"{where}.subresources.scale")
    return found


def _columns(columns: list[dict[str, Any]], where: str) -> list[FieldError]:
    found: list[FieldError] = []
    for i, column in enumerate(columns):
        path = f"{where}.additionalPrinterColumns[{i}]"
        for key in ("name", "type", "jsonPath"):
            if not column.get(key):
                found.append(FieldError.required(f"{path}.{key}", ""))
        if column.get("type") and column["type"] not in COLUMN_TYPES:
            found.append(FieldError.not_supported(f"{path}.type", column["type"], COLUMN_TYPES))
    return found


def _scale(scale: dict[str, Any], where: str) -> list[FieldError]:
    found: list[FieldError] = []
    for key, under in (("specReplicasPath", ".spec"), ("statusReplicasPath", ".status")):
        path = scale.get(key) or ""
        if not path:
            found.append(FieldError.required(f"{where}.{key}", ""))
        elif not path.startswith(under + "."):
            found.append(FieldError.invalid(f"{where}.{key}", path, f"should be a json path under {under}"))
    selector = scale.get("labelSelectorPath")
    if selector and not selector.startswith((".spec.", ".status.")):
        found.append(
            FieldError.invalid(
                f"{where}.labelSelectorPath", selector, "should be a json path under either .spec or .status"
            )
        )
    return found


def _conversion(spec: dict[str, Any], client: Message) -> list[FieldError]:
    """spec.conversion (validateCustomResourceConversion); errors name the internal type's fields
    (webhookClientConfig), as kube-apiserver reports them."""
    conversion = spec.get("conversion") or {}
    strategy = conversion.get("strategy") or "None"
    webhook = conversion.get("webhook") or {}
    config, versions = webhook.get("clientConfig"), webhook.get("conversionReviewVersions") or []
    found: list[FieldError] = []
    if strategy != "None" and spec.get("preserveUnknownFields"):
        found.append(
            FieldError.invalid(
                "spec.conversion.strategy", strategy, "must be None if spec.preserveUnknownFields is true"
            )
        )
    if strategy not in CONVERSIONS:
        return [*found, FieldError.not_supported("spec.conversion.strategy", strategy, CONVERSIONS)]
    where = "spec.conversion.webhookClientConfig"
    if strategy == "None":
        if config is not None:
            found.append(FieldError.forbidden(where, "should not be set when strategy is not set to Webhook"))
        if versions:
            found.append(
                FieldError.forbidden(
                    "spec.conversion.conversionReviewVersions", "should not be set when strategy is not set to Webhook"
                )
            )
        return found
    if config is None:
        found.append(FieldError.required(where, "required when strategy is set to Webhook"))
    elif bool(config.get("url")) == bool(config.get("service")):
        found.append(FieldError.required(where, "exactly one of url or service is required"))
    elif config.get("url"):
        found += url_errors(f"{where}.url", client.url)
    else:
        found += service_errors(client.service, f"{where}.service")
    return found + review_versions(versions, "spec.conversion.conversionReviewVersions", "")
