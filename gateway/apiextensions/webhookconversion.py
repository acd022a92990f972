"""CRD conversion webhooks (apiextensions-apiserver pkg/apiserver/conversion/webhook_converter.go):
objects of one CRD version are sent to the webhook in a ConversionReview to become another version.

``WebhookConverter`` converts stored values (JSON bytes) in batches: every value not already in the
desired version goes into one review; the answer is checked as upstream checks it (same uid, as many
objects, the desired apiVersion, the same kind, name, namespace and uid) and each converted object
keeps the original's metadata but for its labels and annotations (upstream's restoreObjectMeta).
Failures raise ``ConversionFailed`` with upstream's words: a 500 without a reason, as kube-apiserver
answers a conversion error (ErrorToAPIStatus of a plain error).
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass
from typing import Any

import orjson

from protokube.gateway.errors import FieldError, aggregate
from protokube.gateway.registry.validation.common import annotations_errors, labels_errors
from protokube.gateway.storage.backend import PlainFailure
from protokube.gateway.webhooks.client import Caller, CallFailed, ClientConfig, Service
from protokube.schema import deep

REVIEW_GROUP = "apiextensions.k8s.io"
REVIEW_VERSIONS = ("v1", "v1beta1")
TIMEOUT = 30.0  # seconds: the webhook client's default (conversion has no timeoutSeconds)


class ConversionFailed(PlainFailure):
    """A conversion webhook failed or answered wrongly (the client sees the message as it is)."""


@dataclass(frozen=True, slots=True)
class WebhookConversion:
    """A CRD's ``spec.conversion`` with strategy Webhook."""

    client: ClientConfig
    review_version: str  # the first of conversionReviewVersions this server speaks

    @classmethod
    def of(cls, conversion: dict[str, Any]) -> WebhookConversion | None:
        """The webhook conversion a CRD's spec.conversion asks for (None: strategy None)."""
        if conversion.get("strategy") != "Webhook":
            return None
        webhook = conversion.get("webhook") or {}
        config = webhook.get("clientConfig") or {}
        service = None
        if config.get("service"):
            ref = config["service"]
            service = Service(ref.get("namespace", ""), ref.get("name", ""), ref.get("path", ""), ref.get("port", 443))
        ca_bundle = config.get("caBundle") or ""
        client = ClientConfig(config.get("url", ""), service, _pem(ca_bundle))
        versions = webhook.get("conversionReviewVersions") or []
        return cls(client, next((v for v in versions if v in REVIEW_VERSIONS), ""))


def _pem(ca_bundle: str) -> bytes:
    """caBundle as the CRD's JSON holds it (base64)."""
    return base64.b64decode(ca_bundle) if ca_bundle else b""


class WebhookConverter:
    """Converts one CRD's objects between its versions by its conversion webhook."""

    def __init__(self, conversion: WebhookConversion, caller: Caller, kind: str, list_kind: str) -> None:
        self.conversion = conversion
        self.caller = caller
        self.kind = kind
        self.list_kind = list_kind

    async def convert(self, objects: list[dict[str, Any]], api_version: str) -> list[dict[str, Any]]:
        """``objects`` in ``api_version``: those in another version are sent in one review (the
        others are returned as they are)."""
        pending = [i for i, obj in enumerate(objects) if obj.get("apiVersion") != api_version]
        if not pending:
            return objects
        originals = [objects[i] for i in pending]
        first = originals[0].get("apiVersion", "")
        source = f"{first}, Kind={self.kind if len(pending) == 1 else self.list_kind}"
        converted = await self._review(originals, api_version, source)
        out = list(objects)
        batch = len(pending) > 1
        for n, (place, original, answer) in enumerate(zip(pending, originals, converted, strict=True)):
            out[place] = self._checked(original, answer, api_version, source, n if batch else None)
        return out

    async def _review(self, objects: list[dict[str, Any]], api_version: str, source: str) -> list[Any]:
        version = self.conversion.review_version
        if not version:
            raise ConversionFailed("no supported conversion review versions")
        uid = str(uuid.uuid4())
        review = {
            "apiVersion": f"{REVIEW_GROUP}/{version}",
            "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": objects},
        }
        try:
            body = await self.caller.post(self.conversion.client, TIMEOUT, orjson.dumps(review))
            converted = _converted_objects(body, uid, version)
        except (CallFailed, _BadReview) as err:
            raise ConversionFailed(f"conversion webhook for {source} failed: {_reason(err)}") from None
        if len(converted) != len(objects):
            raise ConversionFailed(
                f"conversion webhook for {source} returned {len(converted)} objects, expected {len(objects)}"
            )
        return converted

    def _checked(
        self, original: dict[str, Any], answer: Any, api_version: str, source: str, index: int | None
    ) -> dict[str, Any]:
        """The converted object with the original's metadata but for labels and annotations;
        ``index``: its place among the converted (None: the only one), as upstream counts it."""
        prefix = f"conversion webhook for {source} returned"
        at = "invalid object at index 0" if index is None else f"invalid converted object at index {index + 1}"
        if not isinstance(answer, dict):
            raise ConversionFailed(f"{prefix} {at}: Object 'Kind' is missing in '{orjson.dumps(answer).decode()}'")
        got = answer.get("apiVersion", "")
        if got != api_version:
            raise ConversionFailed(f"{prefix} {at}: invalid groupVersion (expected {api_version}, received {got})")
        kind = answer.get("kind", "")
        if kind != original.get("kind", ""):
            raise ConversionFailed(
                f"{prefix} {at}: invalid kind (expected {original.get('kind', '')}, received {kind})"
            )
        problem = _meta_problem(original, answer)
        if problem:
            at = "invalid object" if index is None else at
            raise ConversionFailed(f"{prefix} {at}: {problem}")
        try:
            answer["metadata"] = _restored_meta(original.get("metadata") or {}, answer.get("metadata"))
        except ValueError as err:
            what = "invalid metadata" if index is None else f"invalid metadata in object at index {index + 1}"
            raise ConversionFailed(f"{prefix} {what}: {err}") from None
        return answer


class _BadReview(Exception):
    """The webhook's answer is not a successful ConversionReview for our request."""


def _reason(err: Exception) -> str:
    text = str(err)
    return text.removeprefix("failed to call webhook: ") if isinstance(err, CallFailed) else text


def _converted_objects(body: bytes, uid: str, version: str) -> list[Any]:
    try:
        review = orjson.loads(body)
    except orjson.JSONDecodeError as err:
        raise _BadReview(f"invalid character in the answer: {err}") from None
    if not isinstance(review, dict):
        raise _BadReview("the answer is not a ConversionReview")
    expected = f"{REVIEW_GROUP}/{version}"
    if version == "v1" and (review.get("apiVersion"), review.get("kind")) != (expected, "ConversionReview"):
        got = f"{review.get('apiVersion', '')}, Kind={review.get('kind', '')}"
        raise _BadReview(f"expected webhook response of {expected}, Kind=ConversionReview, got {got}")
    response = review.get("response")
    if not isinstance(response, dict):
        raise _BadReview("no response provided")
    if version == "v1" and response.get("uid") != uid:
        raise _BadReview(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
    result = response.get("result") or {}
    if result.get("status") != "Success":
        message = result.get("message") or ""
        raise _BadReview(message or f"response.result.status was '{result.get('status', '')}', not 'Success'")
    objects = response.get("convertedObjects") or []
    if not isinstance(objects, list):
        raise _BadReview("response.convertedObjects is not a list")
    return objects


def _meta_problem(original: dict[str, Any], converted: dict[str, Any]) -> str:
    """upstream's validateConvertedObject: name, namespace and uid must not change (the kind was
    checked before)."""
    before, after = original.get("metadata") or {}, converted.get("metadata") or {}
    if not isinstance(after, dict):
        after = {}
    for field, label in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
        if before.get(field, "") != after.get(field, ""):
            return f"must have the same {label}: {before.get(field, '')} != {after.get(field, '')}"
    return ""


def _restored_meta(original: dict[str, Any], converted: Any) -> dict[str, Any]:
    """The original metadata with the converted labels and annotations (ValueError: unusable)."""
    if converted is None:
        raise ValueError("missing metadata in converted object")
    if not isinstance(converted, dict):
        raise ValueError(f"invalid metadata of type {_go_type(converted)} in converted object")
    restored: dict[str, Any] = deep.copy(original)
    for field in ("labels", "annotations"):
        value = converted.get(field)
        if value is None:
            restored.pop(field, None)
            continue
        if not isinstance(value, dict):
            raise ValueError(f"invalid metadata.{field} of type {_go_type(value)} in converted object")
        for key, item in value.items():
            if not isinstance(item, str):
                raise ValueError(
                    f"metadata.{field}[{key}] must be a string, but is {_go_type(item)} in converted object"
                )
        if value != (original.get(field) or {}):
            found: list[FieldError] = (
                labels_errors(value, "metadata.labels")
                if field == "labels"
                else annotations_errors(value, "metadata.annotation")
            )
            if found:
                raise ValueError(aggregate(found))
        restored[field] = value
    return restored


def _go_type(value: Any) -> str:
    """The Go type a JSON value decodes to (as %T prints it)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "float64" if isinstance(value, float) else "int64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]interface {}"
    return "map[string]interface {}"
