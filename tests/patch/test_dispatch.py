"""The PATCH entry point: accepted patch types and the 415 answer (k8s.io/apiserver/pkg/endpoints/
handlers/patch.go PatchResource, negotiation.NewUnsupportedMediaTypeError; the lists of
endpoints/installer.go for built-in kinds and apiextensions-apiserver's customresource_handler.go)."""

from __future__ import annotations

import pytest

from protokube.gateway.errors import StatusError
from protokube.gateway.patch.dispatch import (
    APPLY_PATCH_YAML,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    accepted_patch_types,
    apply_patch,
    patch_type,
    route_content_type_error,
)
from protokube.schema.jsonencode import to_dict
from protokube.schema.typetree import proto_type

CONFIGMAP = proto_type("k8s.io.api.core.v1.ConfigMap")
CURRENT = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}

BUILTIN_415 = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, "
    "application/apply-patch+yaml"
)
CUSTOM_RESOURCE_415 = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
)


def test_accepted_patch_types_in_upstream_order() -> None:
    assert accepted_patch_types() == [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH_YAML]
    assert accepted_patch_types(strategic=False) == [JSON_PATCH, MERGE_PATCH, APPLY_PATCH_YAML]
    assert accepted_patch_types(cbor=True)[-1] == "application/apply-patch+cbor"


@pytest.mark.parametrize(
    ("header", "kind"),
    [
        ("application/merge-patch+json", "application/merge-patch+json"),
        ("application/merge-patch+json; charset=utf-8", "application/merge-patch+json"),
        ("application/merge-patch+json ; charset=utf-8", "application/merge-patch+json "),  # not trimmed
        (";application/merge-patch+json", ";application/merge-patch+json"),  # only cut when ";" is not first
        (None, ""),
    ],
)
def test_patch_type_is_the_content_type_before_its_parameters(header: str | None, kind: str) -> None:
    assert patch_type(header) == kind


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/merge-patch+json ; charset=utf-8",
        "APPLICATION/MERGE-PATCH+JSON",
        None,
        "text/plain",
    ],
)
def test_other_content_types_are_415(content_type: str | None) -> None:
    with pytest.raises(StatusError) as excinfo:
        apply_patch(content_type, CURRENT, b"{}", CONFIGMAP)
    assert to_dict(excinfo.value.status) == {
        "metadata": {},
        "status": "Failure",
        "message": BUILTIN_415,
        "reason": "UnsupportedMediaType",
        "code": 415,
    }


def test_strategic_merge_patch_for_a_kind_without_go_types_is_415() -> None:
    with pytest.raises(StatusError) as excinfo:
        apply_patch(STRATEGIC_MERGE_PATCH, CURRENT, b"{}", None)
    assert (excinfo.value.code, excinfo.value.status.message) == (415, CUSTOM_RESOURCE_415)


def test_415_comes_before_the_body_is_read() -> None:
    with pytest.raises(StatusError) as excinfo:
        apply_patch("application/json", CURRENT, b"not json", CONFIGMAP)
    assert excinfo.value.code == 415


def test_cbor_apply_patches_are_accepted_types_only_with_the_gate() -> None:
    with pytest.raises(StatusError) as excinfo:
        apply_patch("application/apply-patch+cbor", CURRENT, b"", CONFIGMAP)
    assert excinfo.value.code == 415
    with pytest.raises(LookupError):
        apply_patch("application/apply-patch+cbor", CURRENT, b"", CONFIGMAP, cbor=True)


def test_apply_patches_are_not_applied_here() -> None:
    with pytest.raises(LookupError):
        apply_patch(APPLY_PATCH_YAML, CURRENT, b"{}", CONFIGMAP)


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        (JSON_PATCH, b'[{"op": "add", "path": "/data/b", "value": "2"}]'),
        (MERGE_PATCH, b'{"data": {"b": "2"}}'),
        (STRATEGIC_MERGE_PATCH, b'{"data": {"b": "2"}}'),
    ],
)
def test_each_patch_type(content_type: str, body: bytes) -> None:
    result = apply_patch(f"{content_type}; charset=utf-8", CURRENT, body, CONFIGMAP)
    assert result.object == {**CURRENT, "data": {"a": "1", "b": "2"}}
    assert result.strict_errors == []
    assert CURRENT["data"] == {"a": "1"}


@pytest.mark.parametrize("validation", ["", "Warn", "Strict"])
def test_strict_decoding_under_warn_and_strict(validation: str) -> None:
    result = apply_patch(
        MERGE_PATCH, CURRENT, b'{"data": {"b": "2", "b": "3"}}', CONFIGMAP, field_validation=validation
    )
    assert result.object["data"] == {"a": "1", "b": "3"}
    assert result.strict_errors == ['duplicate field "data.b"']


def test_no_strict_decoding_under_ignore() -> None:
    body = b'{"data": {"b": "2", "b": "3"}}'
    assert apply_patch(MERGE_PATCH, CURRENT, body, CONFIGMAP, field_validation="Ignore").strict_errors == []


# go-restful v3.11 (RouterJSR311.detectRoute, Route.matchesContentType) selects a built-in kind's
# PATCH route by Content-Type first; kube-apiserver's serviceErrorHandler writes its answer through
# NewGenericServerResponse.
@pytest.mark.parametrize(
    "content_type",
    [
        "application/merge-patch+json",
        "application/merge-patch+json ; charset=utf-8",  # go-restful trims; PatchResource will not
        "application/json, application/merge-patch+json",
        "*/*",
    ],
)
def test_route_matches(content_type: str) -> None:
    assert route_content_type_error(content_type, "2", accepted_patch_types()) is None


def test_route_refuses_other_types_with_a_body() -> None:
    error = route_content_type_error("application/json", "2", accepted_patch_types())
    assert error is not None
    assert to_dict(error.status) == {
        "metadata": {},
        "status": "Failure",
        "message": "415: Unsupported Media Type",
        "reason": "UnsupportedMediaType",
        "details": {},
        "code": 415,
    }


def test_route_refuses_other_types_without_a_body() -> None:
    no_length = route_content_type_error("application/json", None, accepted_patch_types())
    assert no_length is not None
    assert (no_length.code, no_length.status.message) == (
        415,
        "415: Unsupported Media Type\n\nAvailable representations: ",
    )
    zero = route_content_type_error(None, "0", accepted_patch_types())
    assert zero is not None
    assert (zero.code, zero.status.reason, zero.status.message) == (
        406,
        "NotAcceptable",
        "406: Not Acceptable\n\nAvailable representations: ",
    )


def test_a_type_the_route_takes_can_still_be_refused_by_patch_resource() -> None:
    """PatchResource cuts at ";" without trimming: the route matched, the handler answers 415."""
    content_type = "application/merge-patch+json ; charset=utf-8"
    assert route_content_type_error(content_type, "2", accepted_patch_types()) is None
    with pytest.raises(StatusError) as excinfo:
        apply_patch(content_type, CURRENT, b"{}", CONFIGMAP)
    assert excinfo.value.status.message == BUILTIN_415
