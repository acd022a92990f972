"""The checks every group's validation shares, with upstream's exact wording.

String syntax (apimachinery pkg/util/validation: DNS-1123 labels and subdomains, DNS-1035
labels, qualified names, label values, C identifiers, port names and numbers, environment
variable names, config keys, percentages, IPs), label selectors (pkg/apis/meta/v1/validation),
and the small numeric and quantity rules of pkg/apis/core/validation that every group calls.

``*_problems`` functions return upstream's messages (empty: valid); the others return
``FieldError`` lists for a field path given as a string (``spec.template.spec``).
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction

from google.protobuf import json_format
from google.protobuf.message import Message

from protokube.gateway.errors import FieldError, GoText, go_quote
from protokube.schema import quantity

Problems = Callable[[str], list[str]]
MAX_INT32 = 2**31 - 1


def regex_error(message: str, pattern: str, *examples: str) -> str:
    """upstream's RegexError: the message, examples and the regular expression."""
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def inclusive_range_error(low: int, high: int) -> str:
    return f"must be between {low} and {high}, inclusive"


_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_FMT + ")?"
_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_ENV_VAR_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_PERCENT_FMT = "[0-9]+%"
_HTTP_HEADER_FMT = "[-A-Za-z0-9]+"
_WILDCARD_FMT = "\\*\\." + _SUBDOMAIN_FMT

LABEL_MSG = regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character",
    _LABEL_FMT,
    "my-name",
    "123-abc",
)
SUBDOMAIN_MSG = regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
    "must start and end with an alphanumeric character",
    _SUBDOMAIN_FMT,
    "example.com",
)
DNS1035_MSG = regex_error(
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character",
    _DNS1035_FMT,
    "my-name",
    "abc-123",
)
_QUALIFIED_MSG = regex_error(
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    _QUALIFIED_FMT,
    "MyName",
    "my.name",
    "123-abc",
)
LABEL_VALUE_MSG = regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character",
    _LABEL_VALUE_FMT,
    "MyValue",
    "my_value",
    "12345",
)
_C_IDENTIFIER_MSG = regex_error(
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_'",
    _C_IDENTIFIER_FMT,
    "my_name",
    "MY_NAME",
    "MyName",
)
_ENV_VAR_MSG = regex_error(
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and "
    "must not start with a digit",
    _ENV_VAR_FMT,
    "my.env-name",
    "MY_ENV.NAME",
    "MyEnvName1",
)
_CONFIG_KEY_MSG = regex_error(
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
    _CONFIG_KEY_FMT,
    "key.name",
    "KEY_NAME",
    "key-name",
)
_PERCENT_MSG = regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'", _PERCENT_FMT, "1%", "93%"
)
_HTTP_HEADER_MSG = regex_error(
    "a valid HTTP header must consist of alphanumeric characters or '-'", _HTTP_HEADER_FMT, "X-Header-Name"
)
_WILDCARD_MSG = regex_error(
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist "
    "of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
    _WILDCARD_FMT,
    "*.example.com",
)


def _matcher(pattern: str) -> Callable[[str], bool]:
    compiled = re.compile(pattern)
    return lambda value: compiled.fullmatch(value) is not None


_is_label = _matcher(_LABEL_FMT)
_is_subdomain = _matcher(_SUBDOMAIN_FMT)
_is_dns1035 = _matcher(_DNS1035_FMT)
_is_qualified = _matcher(_QUALIFIED_FMT)
_is_label_value = _matcher(_LABEL_VALUE_FMT)
_is_c_identifier = _matcher(_C_IDENTIFIER_FMT)
_is_env_var = _matcher(_ENV_VAR_FMT)
_is_config_key = _matcher(_CONFIG_KEY_FMT)
_is_percent = _matcher(_PERCENT_FMT)
_is_http_header = _matcher(_HTTP_HEADER_FMT)
_is_wildcard = _matcher(_WILDCARD_FMT)
_PORT_NAME_CHARS = re.compile("[-a-z0-9]+")


# ---- string syntax (apimachinery pkg/util/validation) --------------------------------------------
def dns1123_label_problems(value: str) -> list[str]:
    problems = [max_len_error(63)] if len(value) > 63 else []
    if not _is_label(value):
        problems.append(LABEL_MSG)
    return problems


def dns1123_subdomain_problems(value: str) -> list[str]:
    problems = [max_len_error(253)] if len(value) > 253 else []
    if not _is_subdomain(value):
        problems.append(SUBDOMAIN_MSG)
    return problems


def dns1035_label_problems(value: str) -> list[str]:
    problems = [max_len_error(63)] if len(value) > 63 else []
    if not _is_dns1035(value):
        problems.append(DNS1035_MSG)
    return problems


def wildcard_subdomain_problems(value: str) -> list[str]:
    problems = [max_len_error(253)] if len(value) > 253 else []
    if not _is_wildcard(value):
        problems.append(_WILDCARD_MSG)
    return problems


def qualified_name_problems(value: str) -> list[str]:
    """IsQualifiedName: ``[prefix/]name``, the prefix a DNS subdomain, the name at most 63 characters."""
    parts = value.split("/")
    problems: list[str] = []
    if len(parts) > 2:
        return [
            f"a qualified name {_QUALIFIED_MSG} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems += ["prefix part " + p for p in dns1123_subdomain_problems(prefix)]
    if not name:
        problems.append("name part must be non-empty")
    elif len(name) > 63:
        problems.append("name part " + max_len_error(63))
    if not _is_qualified(name):
        problems.append("name part " + _QUALIFIED_MSG)
    return problems


def label_value_problems(value: str) -> list[str]:
    problems = [max_len_error(63)] if len(value) > 63 else []
    if not _is_label_value(value):
        problems.append(LABEL_VALUE_MSG)
    return problems


def c_identifier_problems(value: str) -> list[str]:
    return [] if _is_c_identifier(value) else [_C_IDENTIFIER_MSG]


def _chdir_prefix_problems(value: str) -> list[str]:
    if value in (".", ".."):
        return [f"must not be '{value}'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def env_var_name_problems(value: str) -> list[str]:
    problems = [] if _is_env_var(value) else [_ENV_VAR_MSG]
    return problems + _chdir_prefix_problems(value)


def config_key_problems(value: str) -> list[str]:
    problems = [max_len_error(253)] if len(value) > 253 else []
    if not _is_config_key(value):
        problems.append(_CONFIG_KEY_MSG)
    return problems + _chdir_prefix_problems(value)


def percent_problems(value: str) -> list[str]:
    return [] if _is_percent(value) else [_PERCENT_MSG]


def http_header_name_problems(value: str) -> list[str]:
    return [] if _is_http_header(value) else [_HTTP_HEADER_MSG]


def port_number_problems(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def port_name_problems(port: str) -> list[str]:
    """IsValidPortName (an IANA_SVC_NAME): at most 15 of [-a-z0-9], a letter, no edge or double hyphens."""
    problems = [max_len_error(15)] if len(port) > 15 else []
    if not _PORT_NAME_CHARS.fullmatch(port):
        problems.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", port):
        problems.append("must contain at least one letter (a-z)")
    if "--" in port:
        problems.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        problems.append("must not begin or end with a hyphen")
    return problems


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
    if value.type == 1 and _is_percent(value.strVal) and percent_value(value) > 100:
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
_is_http_path = _matcher(_HTTP_PATH_FMT)


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
