"""Object metadata validation, with upstream's exact field errors (apimachinery validation).

Names by the resource's name rule (DNS-1123 subdomain, DNS-1123 label, DNS-1035 label, path
segment), generateName prefixes, namespaces, label keys and values, and annotation sizes.
"""

from __future__ import annotations

import re

import protokube.options.v1.options_pb2 as opts
from k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta

from gateway.errors import FieldError
from protokube.schema.registry import Resource

_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1035_RE = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
    "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
    "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
TOTAL_ANNOTATION_SIZE = 256 * 1024


def _dns_subdomain(value: str) -> list[str]:
    problems = []
    if len(value) > 253:
        problems.append("must be no more than 253 characters")
    if not _SUBDOMAIN_RE.fullmatch(value):
        problems.append(SUBDOMAIN_MSG)
    return problems


def _dns_label(value: str, pattern: re.Pattern[str], message: str) -> list[str]:
    problems = []
    if len(value) > 63:
        problems.append("must be no more than 63 characters")
    if not pattern.fullmatch(value):
        problems.append(message)
    return problems


def _path_segment(value: str) -> list[str]:
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def name_problems(rule: int, value: str) -> list[str]:
    """What is wrong with a name under a resource's name rule (empty: valid)."""
    if rule == opts.NAME_RULE_DNS1123_LABEL:
        return _dns_label(value, _LABEL_RE, LABEL_MSG)
    if rule == opts.NAME_RULE_DNS1035_LABEL:
        return _dns_label(value, _DNS1035_RE, DNS1035_MSG)
    if rule == opts.NAME_RULE_PATH_SEGMENT:
        return _path_segment(value)
    return _dns_subdomain(value)


def validate_name(resource: Resource, name: str, field: str = "metadata.name") -> list[FieldError]:
    return [FieldError.invalid(field, name, p) for p in name_problems(resource.name_rule, name)]


def qualified_name_problems(key: str) -> list[str]:
    """What is wrong with a label or annotation key ([prefix/]name), as upstream words it."""
    prefix, slash, name = key.rpartition("/")
    problems = []
    if slash:
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems += ["prefix part " + p for p in _dns_subdomain(prefix)]
    if not name:
        problems.append("name part must be non-empty")
    else:
        if len(name) > 63:
            problems.append("name part must be no more than 63 characters")
        if not _QUALIFIED_NAME_RE.fullmatch(name):
            problems.append(QUALIFIED_NAME_MSG)
    return problems


def label_value_problems(value: str) -> list[str]:
    problems = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _LABEL_VALUE_RE.fullmatch(value):
        problems.append(LABEL_VALUE_MSG)
    return problems


def _qualified_name(key: str, field: str) -> list[FieldError]:
    return [FieldError.invalid(field, key, p) for p in qualified_name_problems(key)]


def validate_labels(labels: dict[str, str], field: str = "metadata.labels") -> list[FieldError]:
    found = []
    for key, value in labels.items():
        found += _qualified_name(key, field)
        found += [FieldError.invalid(field, value, p) for p in label_value_problems(value)]
    return found


def validate_annotations(annotations: dict[str, str], field: str = "metadata.annotations") -> list[FieldError]:
    found = []
    for key in annotations:
        found += _qualified_name(key.lower(), field)
    total = sum(len(k) + len(v) for k, v in annotations.items())
    if total > TOTAL_ANNOTATION_SIZE:
        found.append(
            FieldError("FieldValueTooLong", field, f"may not be more than {TOTAL_ANNOTATION_SIZE} bytes", "", False)
        )
    return found


def validate_object_meta(resource: Resource, metadata: meta.ObjectMeta, *, creating: bool) -> list[FieldError]:
    """upstream's ValidateObjectMeta: name or generateName, namespace, labels, annotations."""
    found: list[FieldError] = []
    if metadata.generateName and creating:
        prefix = metadata.generateName
        masked = prefix[:-1] if prefix.endswith("-") and len(prefix) > 1 else prefix
        found += [
            FieldError.invalid("metadata.generateName", prefix, p) for p in name_problems(resource.name_rule, masked)
        ]
    if not metadata.name:
        if not metadata.generateName:
            found.append(FieldError.required("metadata.name", "name or generateName is required"))
    else:
        found += validate_name(resource, metadata.name)
    if resource.namespaced:
        if not metadata.namespace:
            found.append(FieldError.required("metadata.namespace"))
        else:
            found += [
                FieldError.invalid("metadata.namespace", metadata.namespace, p)
                for p in _dns_label(metadata.namespace, _LABEL_RE, LABEL_MSG)
            ]
    elif metadata.namespace:
        found.append(FieldError.forbidden("metadata.namespace", "not allowed on this type"))
    found += validate_labels(dict(metadata.labels))
    found += validate_annotations(dict(metadata.annotations))
    return found
