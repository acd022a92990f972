"""The admission variables of CEL expressions: ``authorizer`` (upstream's authorizer library:
``authorizer.group(g).resource(r).namespace(ns).name(n).check(verb).allowed()``, with 1.32's
``fieldSelector(s)`` and ``labelSelector(s)``,
``authorizer.path(p).check(verb)``, ``authorizer.serviceAccount(ns, name)``,
``authorizer.requestResource``) and ``request`` (the AdmissionRequest as a map, without object
and oldObject, which are variables of their own)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from celpy import celtypes

from protokube.gateway.auth.rbac import Attributes as AuthorizationAttributes
from protokube.gateway.cel.library import method
from protokube.gateway.user import UserInfo, service_account_user, user_info_json

if TYPE_CHECKING:
    from protokube.gateway.auth.authorization import Authorizer
    from protokube.gateway.registry.admission import Attributes
    from protokube.schema.registry import GroupVersionKind, Resource

String = celtypes.StringType


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""
    error: str = ""


@dataclass(frozen=True)
class ResourceCheck:
    authorizer: Authorizer
    user: UserInfo
    group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    field_selector: str = ""  # 1.32's authz selectors: kept, unused — the authorizers here (RBAC) take none
    label_selector: str = ""


@dataclass(frozen=True)
class PathCheck:
    authorizer: Authorizer
    user: UserInfo
    path: str


class AuthorizerValue(celtypes.MapType):
    """``authorizer``: a map only for ``authorizer.requestResource``; its methods are functions."""

    def __init__(self, authorizer: Authorizer, user: UserInfo, request_resource: ResourceCheck | None = None) -> None:
        super().__init__({String("requestResource"): request_resource} if request_resource else {})
        self.authorizer = authorizer
        self.user = user


def authorizer_value(authorizer: Authorizer, attributes: Attributes) -> AuthorizerValue:
    """The ``authorizer`` of a request: checks as its user, ``requestResource`` its resource."""
    resource = attributes.resource
    request = ResourceCheck(
        authorizer,
        attributes.user,
        resource.group,
        resource.plural,
        attributes.subresource,
        attributes.namespace,
        attributes.name,
    )
    return AuthorizerValue(authorizer, attributes.user, request)


@method("group", AuthorizerValue)
def group(value: AuthorizerValue, name: String) -> ResourceCheck:
    return ResourceCheck(value.authorizer, value.user, group=str(name))


@method("path", AuthorizerValue)
def path(value: AuthorizerValue, text: String) -> PathCheck:
    return PathCheck(value.authorizer, value.user, str(text))


@method("serviceAccount", AuthorizerValue)
def service_account(value: AuthorizerValue, namespace: String, name: String) -> AuthorizerValue:
    return AuthorizerValue(value.authorizer, service_account_user(str(namespace), str(name)))


@method("resource", ResourceCheck)
def resource(check: ResourceCheck, name: String) -> ResourceCheck:
    return replace(check, resource=str(name))


@method("subresource", ResourceCheck)
def subresource(check: ResourceCheck, name: String) -> ResourceCheck:
    return replace(check, subresource=str(name))


@method("namespace", ResourceCheck)
def namespace(check: ResourceCheck, name: String) -> ResourceCheck:
    return replace(check, namespace=str(name))


@method("name", ResourceCheck)
def name(check: ResourceCheck, text: String) -> ResourceCheck:
    return replace(check, name=str(text))


@method("fieldSelector", ResourceCheck)
def field_selector(check: ResourceCheck, text: String) -> ResourceCheck:
    return replace(check, field_selector=str(text))


@method("labelSelector", ResourceCheck)
def label_selector(check: ResourceCheck, text: String) -> ResourceCheck:
    return replace(check, label_selector=str(text))


@method("check", (ResourceCheck, PathCheck))
def check(target: ResourceCheck | PathCheck, verb: String) -> Decision:
    if isinstance(target, PathCheck):
        asked = AuthorizationAttributes(target.user, str(verb), False, path=target.path)
    else:
        asked = AuthorizationAttributes(
            target.user,
            str(verb),
            True,
            api_group=target.group,
            resource=target.resource,
            subresource=target.subresource,
            namespace=target.namespace,
            name=target.name,
        )
    try:
        decision = target.authorizer.authorize(asked)
    except Exception as err:  # an authorizer's failure is the decision's error
        return Decision(False, error=str(err))
    return Decision(decision.allowed, decision.reason)


@method("allowed", Decision)
def allowed(decision: Decision) -> celtypes.BoolType:
    return celtypes.BoolType(decision.allowed)


@method("reason", Decision)
def reason(decision: Decision) -> String:
    return String(decision.reason)


@method("errored", Decision)
def errored(decision: Decision) -> celtypes.BoolType:
    return celtypes.BoolType(bool(decision.error))


@method("error", Decision)
def error(decision: Decision) -> String:
    return String(decision.error)


_OPTIONS_KINDS = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}


def _options(attributes: Attributes) -> dict[str, Any]:
    options: dict[str, Any] = {"kind": _OPTIONS_KINDS[attributes.operation], "apiVersion": "meta.k8s.io/v1"}
    if attributes.dry_run:
        options["dryRun"] = ["All"]
    manager = getattr(attributes.options, "field_manager", "")
    if manager:
        options["fieldManager"] = manager
    return options


def request_map(
    attributes: Attributes, uid: str = "", matched: tuple[Resource, GroupVersionKind] | None = None
) -> dict[str, Any]:
    """The AdmissionRequest of ``attributes`` as JSON values (CEL's ``request``); ``matched``: the
    resource and kind a policy or webhook took the request as (matchPolicy Equivalent), which
    ``resource`` and ``kind`` name — ``requestResource`` and ``requestKind`` are the request's."""
    resource, requested = attributes.resource, attributes.kind
    request_kind = {"group": requested.group, "version": requested.version, "kind": requested.kind}
    request_resource = {"group": resource.group, "version": resource.version, "resource": resource.plural}
    kind, gvr = request_kind, request_resource
    if matched is not None and matched[0] is not resource:
        other, gvk = matched
        kind = {"group": gvk.group, "version": gvk.version, "kind": gvk.kind}
        gvr = {"group": other.group, "version": other.version, "resource": other.plural}
    request: dict[str, Any] = {
        "uid": uid or str(uuid.uuid4()),
        "kind": kind,
        "resource": gvr,
        "requestKind": request_kind,
        "requestResource": request_resource,
        "name": attributes.name,
        "namespace": attributes.namespace,
        "operation": attributes.operation,
        "userInfo": user_info_json(attributes.user),
        "dryRun": attributes.dry_run,
        "options": _options(attributes),
    }
    if attributes.subresource:
        request["subResource"] = attributes.subresource
        request["requestSubResource"] = attributes.subresource
    return request
