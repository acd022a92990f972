"""AdmissionReview (admission.k8s.io/v1, or v1beta1 for webhooks that speak only it): the
request sent to a webhook and the answer read back, verified as upstream's
VerifyAdmissionResponse does. An answer's auditAnnotations are not kept: protokube has no audit log."""

from __future__ import annotations

import base64
import binascii
import uuid
from dataclasses import dataclass, field
from typing import Any

import orjson
from google.protobuf import json_format

from protokube.gateway.admission.webhook.rules import NAMESPACES, Invocation
from protokube.gateway.params import DeleteOptions
from protokube.gateway.registry.admission import CREATE, Attributes
from protokube.gateway.user import user_info_json
from protokube.gateway.webhooks.client import CallFailed
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta

GROUP = "admission.k8s.io"
INVALID = "received invalid webhook response: "


@dataclass
class Answer:
    allowed: bool
    status: meta.Status | None
    patch: bytes = b""
    patch_type: str | None = None  # None: not given
    warnings: list[str] = field(default_factory=list)


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


def _gvr(group: str, version: str, resource: str) -> dict[str, str]:
    return {"group": group, "version": version, "resource": resource}


def _options(attributes: Attributes) -> dict[str, Any]:
    """The request's options as the meta.k8s.io/v1 object upstream sends (CreateOptions for
    creates, UpdateOptions for updates and patches, DeleteOptions for deletes)."""
    options = attributes.options
    if isinstance(options, DeleteOptions):
        found: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}
        if options.grace_period_seconds is not None:
            found["gracePeriodSeconds"] = options.grace_period_seconds
        if options.precondition_uid is not None or options.precondition_resource_version is not None:
            preconditions = {"uid": options.precondition_uid, "resourceVersion": options.precondition_resource_version}
            found["preconditions"] = {key: value for key, value in preconditions.items() if value is not None}
        if options.orphan_dependents is not None:
            found["orphanDependents"] = options.orphan_dependents
        if options.propagation_policy is not None:
            found["propagationPolicy"] = options.propagation_policy
        if options.dry_run_values:
            found["dryRun"] = list(options.dry_run_values)
        return found
    kind = "CreateOptions" if attributes.operation == CREATE else "UpdateOptions"
    found = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    if options.dry_run:
        found["dryRun"] = ["All"]
    if options.field_manager:
        found["fieldManager"] = options.field_manager
    if options.field_validation:
        found["fieldValidation"] = options.field_validation
    return found


def request(
    attributes: Attributes, invocation: Invocation, version: str, obj: bytes | None, old: bytes | None
) -> tuple[str, bytes]:
    """A new review's uid and JSON body; ``obj`` and ``old``: the objects' JSON as served (None: absent)."""
    uid = str(uuid.uuid4())
    resource, requested = invocation.resource, attributes.resource
    kind = invocation.kind
    requested_kind = attributes.kind
    body: dict[str, Any] = {
        "uid": uid,
        "kind": _gvk(kind.group, kind.version, kind.kind),
        "resource": _gvr(resource.group, resource.version, resource.plural),
    }
    if attributes.subresource:
        body["subResource"] = attributes.subresource
    body["requestKind"] = _gvk(requested_kind.group, requested_kind.version, requested_kind.kind)
    body["requestResource"] = _gvr(requested.group, requested.version, requested.plural)
    if attributes.subresource:
        body["requestSubResource"] = attributes.subresource
    if attributes.name:
        body["name"] = attributes.name
    namespace = attributes.namespace
    if requested.key == NAMESPACES and attributes.operation != CREATE:
        namespace = attributes.name  # upstream's request info names a namespace's own path so
    if namespace:
        body["namespace"] = namespace
    body["operation"] = attributes.operation
    body["userInfo"] = user_info_json(attributes.user)
    body["object"] = orjson.Fragment(obj) if obj is not None else None
    body["oldObject"] = orjson.Fragment(old) if old is not None else None
    body["dryRun"] = attributes.dry_run
    body["options"] = _options(attributes)
    review = {"kind": "AdmissionReview", "apiVersion": f"{GROUP}/{version}", "request": body}
    return uid, orjson.dumps(review)


def answer(body: bytes, uid: str, version: str, mutating: bool) -> Answer:
    """The webhook's verified answer; CallFailed when it is not one."""
    review = _decode(body, version)
    response = review.get("response")
    if not isinstance(response, dict):
        raise CallFailed(INVALID + "webhook response was absent")
    if version == "v1":
        if response.get("uid", "") != uid:
            raise CallFailed(INVALID + f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
        got = f"{GROUP}/{version}, Kind=AdmissionReview"
        if review.get("apiVersion") != f"{GROUP}/v1":
            raise CallFailed(INVALID + f"expected webhook response of {got}, got {_gvk_text(review)}")
    try:
        result = _answer(response)
    except (ValueError, TypeError, binascii.Error, json_format.ParseError) as err:
        raise CallFailed(f"failed to call webhook: {err}") from None
    _check_patch(result, version, mutating)
    return result


def _decode(body: bytes, version: str) -> dict[str, Any]:
    """client-go's decoding of the answer into an AdmissionReview."""
    try:
        review = orjson.loads(body)
    except orjson.JSONDecodeError as err:
        raise CallFailed(f"failed to call webhook: couldn't get version/kind; json parse error: {err}") from None
    if not isinstance(review, dict):
        raise CallFailed(f"failed to call webhook: couldn't get version/kind; json parse error: {_type_error(review)}")
    if not review.get("kind"):
        raise CallFailed(f"failed to call webhook: Object 'Kind' is missing in '{body.decode('utf-8', 'replace')}'")
    if review.get("kind") != "AdmissionReview" or str(review.get("apiVersion", "")).partition("/")[0] != GROUP:
        raise CallFailed(
            f'failed to call webhook: no kind "{review.get("kind")}" is registered for version '
            f'"{review.get("apiVersion", "")}" in scheme "k8s.io/apiserver/pkg/util/webhook/webhook.go"'
        )
    return review


def _type_error(value: object) -> str:
    kind = {list: "array", str: "string", bool: "bool"}.get(type(value), "number")
    return f"json: cannot unmarshal {kind} into Go value of type struct {{ APIVersion string; Kind string }}"


def _gvk_text(review: dict[str, Any]) -> str:
    group, _, version = str(review.get("apiVersion", "")).rpartition("/")
    return f"{group}/{version}, Kind={review.get('kind', '')}"


def _answer(response: dict[str, Any]) -> Answer:
    status = None
    if response.get("status") is not None:
        status = json_format.ParseDict(response["status"], meta.Status(), ignore_unknown_fields=True)
    patch = response.get("patch")
    warnings = response.get("warnings") or []
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        raise TypeError("json: cannot unmarshal into Go struct field AdmissionResponse.warnings of type string")
    return Answer(
        allowed=response.get("allowed") is True,
        status=status,
        patch=base64.b64decode(patch, validate=True) if patch else b"",
        patch_type=response.get("patchType"),
        warnings=warnings,
    )


def _check_patch(result: Answer, version: str, mutating: bool) -> None:
    """Patch and patchType go together, only from mutating webhooks (v1beta1: JSONPatch implied)."""
    given = result.patch_type is not None
    if version == "v1beta1":
        result.patch_type = "JSONPatch" if mutating and result.patch else ""
        if not mutating:
            result.patch = b""
        return
    if mutating:
        if result.patch and not given:
            raise CallFailed(INVALID + "webhook returned response.patch but not response.patchType")
        if not result.patch and given:
            raise CallFailed(INVALID + "webhook returned response.patchType but not response.patch")
        if given and not result.patch_type:
            raise CallFailed(INVALID + 'webhook returned invalid response.patchType of ""')
    else:
        if result.patch:
            raise CallFailed(INVALID + "validating webhook may not return response.patch")
        if given:
            raise CallFailed(INVALID + "validating webhook may not return response.patchType")
