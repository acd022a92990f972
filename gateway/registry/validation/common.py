"""The checks every group's validation shares, with upstream's exact wording.

IPs and CIDRs, label selectors (pkg/apis/meta/v1/validation), and the small numeric and quantity
rules of pkg/apis/core/validation that every group calls; the string syntax they build on
(apimachinery pkg/util/validation) is gateway/syntax.py's.

``*_problems`` functions return upstream's messages (empty: valid); the others return
``FieldError`` lists for a field path given as a string (``spec.template.spec``).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction

from google.protobuf import json_format
from google.protobuf.message import Message

from protokube.gateway.errors import FieldError, GoText, go_quote
from protokube.gateway.syntax import (
    dns1123_subdomain_problems,
    is_percent,
    label_value_problems,
    matcher,
    percent_problems,
    qualified_name_problems,
    regex_error,
)
from protokube.schema import quantity

Problems = Callable[[str], list[str]]
MAX_INT32 = 2**31 - 1


def parse_ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """netutils.ParseIPSloppy: also IPv4 with leading zeros (read as decimal)."""
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        parts = value.split(".")
        if len(parts) == 4 and all(p.isdigit() and len(p) <= 3 and int(p) < 256 for p in parts):
            return ipaddress.IPv4Address(".".join(str(int(p)) for p in parts))
        return None


def ip_errors(field: str, value: str) -> list[FieldError]:
    if parse_ip(value) is None:
        return [FieldError.invalid(field, value, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]
    return []


def cidr_errors(field: str, value: str) -> list[FieldError]:
    address, slash, bits = value.partition("/")
    valid = bool(slash) and parse_ip(address) is not None and bits.isdigit()
    if valid:
        try:
            ipaddress.ip_network(f"{parse_ip(address)}/{int(bits)}", strict=False)
        except ValueError:
            valid = False
    if not valid:
        return [FieldError.invalid(field, value, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")]
    return []


# ---- FieldError builders ----------------------------------------------------------------------
def invalid_each(field: str, value: object, problems: Iterable[str]) -> list[FieldError]:
    """One Invalid error per problem upstream found in ``value``."""
    return [FieldError.invalid(field, value, problem) for problem in problems]


def check(field: str, value: str, problems: Problems) -> list[FieldError]:
    return invalid_each(field, value, problems(value))


def required_then(field: str, value: str, problems: Problems, detail: str = "") -> list[FieldError]:
    """Required when empty, else the syntax check (upstream's most common pattern)."""
    if not value:
        return [FieldError.required(field, detail)]
    return check(field, value, problems)


def enum(field: str, value: str, supported: Sequence[str], *, required: bool = False) -> list[FieldError]:
    """A value from a fixed set, ``supported`` in upstream's order (sorted where upstream uses a set).

    Empty is Required only with ``required``: most enums are defaulted before validation, so an
    empty value never reaches upstream's check."""
    if not value:
        return [FieldError.required(field)] if required else []
    return [] if value in supported else [FieldError.not_supported(field, value, supported)]


def nonnegative(field: str, value: int) -> list[FieldError]:
    return [FieldError.invalid(field, value, "must be greater than or equal to 0")] if value < 0 else []


def positive(field: str, value: int) -> list[FieldError]:
    return [FieldError.invalid(field, value, "must be greater than zero")] if value <= 0 else []


def immutable(field: str, new: object, old: object, shown: object = None) -> list[FieldError]:
    """ValidateImmutableField: ``shown`` is the value printed (default: the new value)."""
    if new == old:
        return []
    return [FieldError.invalid(field, new if shown is None else shown, "field is immutable")]


def messages_equal(new: Message, old: Message) -> bool:
    """Semantic equality of two messages: unset and empty compare equal, as Go's zero values do."""
    return new.SerializeToString(deterministic=True) == old.SerializeToString(deterministic=True)


def is_set(message: Message, name: str) -> bool:
    """Whether a field holds a value Go would not see as its zero value (unset, empty list or map)."""
    if message.DESCRIPTOR.fields_by_name[name].is_repeated:
        return len(getattr(message, name)) > 0
    return message.HasField(name)


def duplicates(field: str, values: Iterable[str]) -> list[FieldError]:
    """A Duplicate error at ``field[i]`` for each value seen before."""
    seen: set[str] = set()
    found = []
    for i, value in enumerate(values):
        if value in seen:
            found.append(FieldError.duplicate(f"{field}[{i}]", value))
        seen.add(value)
    return found


# ---- quantities and int-or-string ------------------------------------------------------------
def quantity_value(text: str) -> Fraction:
    """The value of a stored quantity string (stored quantities were parsed when decoded)."""
    try:
        return quantity.parse(text)[0]
    except quantity.QuantityError:
        return Fraction(0)


def quantity_text(text: str) -> str:
    """A quantity as upstream prints it (its canonical String())."""
    try:
        return quantity.canonical(text)
    except quantity.QuantityError:
        return text


def nonnegative_quantity(field: str, text: str) -> list[FieldError]:
    if quantity_value(text) < 0:
        return [FieldError.invalid(field, quantity_text(text), "must be greater than or equal to 0")]
    return []


def positive_quantity(field: str, text: str) -> list[FieldError]:
    if quantity_value(text) <= 0:
        return [FieldError.invalid(field, quantity_text(text), "must be greater than zero")]
    return []


def int_or_string(value: Message) -> int | str:
    """An IntOrString as Python: the int, or the string."""
    return value.strVal if value.type == 1 else value.intVal


def int_or_percent_errors(field: str, value: Message) -> list[FieldError]:
    """apps' ValidatePositiveIntOrPercent: a non-negative int or a valid percent string."""
    if value.type == 1:
        return invalid_each(field, go_int_or_string(value), percent_problems(value.strVal))
    return nonnegative(field, value.intVal)


def percent_value(value: Message) -> int:
    """The integer of an int-or-percent (``25%`` → 25), 0 when it does not parse."""
    if value.type == 1:
        digits = value.strVal.removesuffix("%")
        return int(digits) if digits.isdigit() else 0
    return value.intVal


def not_more_than_100(value: Message, field: str) -> list[FieldError]:
    if value.type == 1 and is_percent(value.strVal) and percent_value(value) > 100:
        return [FieldError.invalid(field, go_int_or_string(value), "must not be greater than 100%")]
    return []


# ---- labels, annotations and selectors (apimachinery) -----------------------------------------
def labels_errors(labels: Mapping[str, str], field: str) -> list[FieldError]:
    """ValidateLabels: each key a qualified name, each value a label value (all at ``field``)."""
    found = []
    for key, value in labels.items():
        found += check(field, key, qualified_name_problems)
        found += check(field, value, label_value_problems)
    return found


TOTAL_ANNOTATION_SIZE = 256 * 1024


def annotations_errors(annotations: Mapping[str, str], field: str) -> list[FieldError]:
    """ValidateAnnotations: keys are qualified names (lower-cased), 256 KiB in total."""
    found = []
    for key in annotations:
        found += invalid_each(field, key, qualified_name_problems(key.lower()))
    total = sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items())
    if total > TOTAL_ANNOTATION_SIZE:
        found.append(FieldError.too_long(field, TOTAL_ANNOTATION_SIZE))
    return found


def label_selector_errors(selector: Message, field: str) -> list[FieldError]:
    """ValidateLabelSelector: matchLabels as labels, each matchExpressions requirement's shape."""
    found = labels_errors(dict(selector.matchLabels), f"{field}.matchLabels")
    for i, requirement in enumerate(selector.matchExpressions):
        path = f"{field}.matchExpressions[{i}]"
        if requirement.operator in ("In", "NotIn"):
            if not requirement.values:
                detail = "must be specified when `operator` is 'In' or 'NotIn'"
                found.append(FieldError.required(f"{path}.values", detail))
        elif requirement.operator in ("Exists", "DoesNotExist"):
            if requirement.values:
                detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                found.append(FieldError.forbidden(f"{path}.values", detail))
        else:
            found.append(FieldError.invalid(f"{path}.operator", requirement.operator, "not a valid selector operator"))
        found += check(f"{path}.key", requirement.key, qualified_name_problems)
        for j, value in enumerate(requirement.values):
            found += check(f"{path}.values[{j}]", value, label_value_problems)
    return found


def selector_matches(selector: Message, labels: Mapping[str, str]) -> bool:
    """Whether a LabelSelector selects an object with ``labels`` (an empty selector selects all)."""
    if any(labels.get(k) != v for k, v in selector.matchLabels.items()):
        return False
    for requirement in selector.matchExpressions:
        present = requirement.key in labels
        value = labels.get(requirement.key)
        operator = requirement.operator
        if operator == "In" and not (present and value in requirement.values):
            return False
        if operator == "NotIn" and present and value in requirement.values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def selector_is_empty(selector: Message) -> bool:
    return not selector.matchLabels and not selector.matchExpressions


def spec_diff(old: Message, new: Message) -> str:
    """A readable diff of two messages for upstream's "...is immutable\\n<diff>" messages (upstream
    prints go-cmp's diff of its internal types; this lists each changed field, old then new)."""
    lines: list[str] = []

    def walk(path: str, before: object, after: object) -> None:
        if before == after:
            return
        if isinstance(before, dict) and isinstance(after, dict):
            for key in sorted(set(before) | set(after)):
                walk(f"{path}.{key}" if path else key, before.get(key), after.get(key))
            return
        if before is not None:
            lines.append(f"- {path}: {json.dumps(before, sort_keys=True)}")
        if after is not None:
            lines.append(f"+ {path}: {json.dumps(after, sort_keys=True)}")

    walk("", json_format.MessageToDict(old), json_format.MessageToDict(new))
    return "\n".join(lines)


def copy_field(target: Message, source: Message, field: str) -> None:
    """Set ``target``'s ``field`` to ``source``'s (unset when unset there)."""
    target.ClearField(field)
    partial = type(source)()
    partial.CopyFrom(source)
    for descriptor, _ in partial.ListFields():
        if descriptor.name != field:
            partial.ClearField(descriptor.name)
    target.MergeFrom(partial)


# ---- values as Go's %#v prints them (upstream passes some structs to field.Invalid) -----------
def go_string_map(values: Mapping[str, str]) -> GoText:
    """A map[string]string (nil when empty, keys sorted as fmt sorts them)."""
    if not values:
        return GoText("map[string]string(nil)")
    entries = ", ".join(f"{go_quote(k)}:{go_quote(v)}" for k, v in sorted(values.items()))
    return GoText(f"map[string]string{{{entries}}}")


def go_string_slice(values: Iterable[str]) -> str:
    items = list(values)
    return "[]string{" + ", ".join(go_quote(v) for v in items) + "}" if items else "[]string(nil)"


def go_label_selector(selector: Message) -> GoText:
    """A v1.LabelSelector."""
    requirements = [
        f"v1.LabelSelectorRequirement{{Key:{go_quote(r.key)}, Operator:{go_quote(r.operator)}, "
        f"Values:{go_string_slice(r.values)}}}"
        for r in selector.matchExpressions
    ]
    expressions = (
        "[]v1.LabelSelectorRequirement{" + ", ".join(requirements) + "}"
        if requirements
        else "[]v1.LabelSelectorRequirement(nil)"
    )
    return GoText(
        f"v1.LabelSelector{{MatchLabels:{go_string_map(selector.matchLabels)}, MatchExpressions:{expressions}}}"
    )


def go_int_or_string(value: Message) -> GoText:
    """An intstr.IntOrString."""
    return GoText(f"intstr.IntOrString{{Type:{value.type}, IntVal:{value.intVal}, StrVal:{go_quote(value.strVal)}}}")


_HTTP_PATH_FMT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_is_http_path = matcher(_HTTP_PATH_FMT)


def domain_prefixed_path_errors(field: str, value: str) -> list[FieldError]:
    """IsDomainPrefixedPath: ``acme.io/foo``, a DNS subdomain then an HTTP path."""
    if not value:
        return [FieldError.required(field)]
    host, slash, path = value.partition("/")
    if not slash or not host or not path:
        return [FieldError.invalid(field, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    found = invalid_each(field, host, dns1123_subdomain_problems(host))
    if not _is_http_path(path):
        found.append(FieldError.invalid(field, path, regex_error("Invalid path", _HTTP_PATH_FMT)))
    return found


def fully_qualified_name_errors(field: str, name: str) -> list[FieldError]:
    """IsFullyQualifiedName: a DNS subdomain of at least three segments."""
    if not name:
        return [FieldError.required(field)]
    problems = dns1123_subdomain_problems(name)
    if problems:
        return [FieldError.invalid(field, name, ",".join(problems))]
    if len(name.split(".")) < 3:
        return [FieldError.invalid(field, name, "should be a domain with at least three segments separated by dots")]
    return []
