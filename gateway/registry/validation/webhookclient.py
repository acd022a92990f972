"""A webhook's client configuration and the review versions it speaks, checked alike for admission
webhooks (admission/webhook/validation.py) and a CRD's conversion webhook (apiextensions/validation.py),
as upstream shares k8s.io/apiserver pkg/util/webhook's ValidateWebhookURL and ValidateWebhookService."""

from __future__ import annotations

from urllib.parse import urlsplit

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.common import go_string_slice, invalid_each
from protokube.gateway.syntax import dns1035_label_problems, dns1123_subdomain_problems, port_number_problems

REVIEW_VERSIONS = ("v1", "v1beta1")
_URL_FORM = "; desired format: https://host[/path]"


def url_errors(field: str, text: str) -> list[FieldError]:
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


def service_errors(service: Message, field: str) -> list[FieldError]:
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
