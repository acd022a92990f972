"""Label and field selectors: upstream's grammar, matching and error wording.

Label selectors: ``key=value``, ``key==value``, ``key!=value``, ``key in (a,b)``,
``key notin (a,b)``, ``key`` (exists), ``!key`` (does not exist), ``key>1``/``key<1``, joined by
commas (AND). Field selectors: ``field=value``, ``field==value``, ``field!=value``, joined by
commas, on the fields a resource makes selectable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from protokube.gateway import errors
from protokube.gateway.syntax import label_value_problems, qualified_name_problems

_SPECIAL = "!=(),<>"
_TOKEN = re.compile(r"\s*(!=|==|=|!|\(|\)|,|<|>|[^\s!=(),<>]+)")


class SelectorError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # =, !=, in, notin, exists, !, gt, lt
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "exists":
            return self.key in labels
        if op == "!":
            return self.key not in labels
        if op in ("=", "in"):
            return self.key in labels and labels[self.key] in self.values
        if op in ("!=", "notin"):
            return self.key not in labels or labels[self.key] not in self.values
        value = labels.get(self.key)
        if value is None:
            return False
        try:
            found, bound = int(value), int(self.values[0])
        except ValueError:
            return False
        return found > bound if op == "gt" else found < bound


@dataclass(frozen=True, slots=True)
class LabelSelector:
    requirements: tuple[Requirement, ...]

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)


EVERYTHING = LabelSelector(())


def _tokens(text: str) -> list[str]:
    tokens, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            break
        tokens.append(match.group(1))
        pos = match.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return tokens


def _check_key(key: str) -> None:
    problems = qualified_name_problems(key)
    if problems:
        raise SelectorError(f'key: Invalid value: "{key}": {"; ".join(problems)}')


def _check_value(key: str, index: int, value: str) -> None:
    problems = label_value_problems(value)
    if problems:
        raise SelectorError(f'values[{index}][{key}]: Invalid value: "{value}": {"; ".join(problems)}')


def _identifier(token: str) -> bool:
    return token != "" and token not in _SPECIAL and token not in ("!=", "==")


def _set_values(at: Callable[[int], str], j: int) -> tuple[tuple[str, ...], int]:
    """The values of ``key in (...)`` from the token after "(" (upstream's parseValues and
    parseIdentifiersList: "()", "(,", ",," and ",)" stand for the empty value); sorted, and where
    the requirement ends."""
    first = at(j)
    if first == ")":
        return ("",), j + 1
    if first != "," and not _identifier(first):
        raise SelectorError(f"unable to parse requirement: found '{first}', expected: ',', ')' or identifier")
    values: set[str] = set()
    while True:
        token, following = at(j), at(j + 1)
        j += 1
        if _identifier(token):
            values.add(token)
            if following == ")":
                return tuple(sorted(values)), j + 1
            if following != ",":
                raise SelectorError(f"unable to parse requirement: found '{following}', expected: ',' or ')'")
        elif token == ",":
            if not values or following in (")", ","):
                values.add("")
            if following == ")":
                return tuple(sorted(values)), j + 1
            if following == ",":
                j += 1
        else:
            raise SelectorError(f"unable to parse requirement: found '{token}', expected: ',', or identifier")


def parse_labels(text: str) -> LabelSelector:
    """Parse a label selector; SelectorError with upstream's message when malformed."""
    tokens = _tokens(text)
    requirements: list[Requirement] = []
    i = 0

    def at(k: int) -> str:
        return tokens[k] if k < len(tokens) else ""

    while i < len(tokens):
        token = tokens[i]
        if token == "!":
            key = at(i + 1)
            if not key or key in _SPECIAL or all(c in _SPECIAL for c in key):
                raise SelectorError(f"unable to parse requirement: found '{key}', expected: identifier")
            _check_key(key)
            requirements.append(Requirement(key, "!"))
            i += 2
        elif token in _SPECIAL or token in ("!=", "=="):
            raise SelectorError(f"found '{token}', expected: !, identifier, or 'end of string'")
        else:
            key = token
            _check_key(key)
            op = at(i + 1)
            if op in ("", ","):
                requirements.append(Requirement(key, "exists"))
                i += 1
            elif op in ("=", "==", "!=", ">", "<"):
                value = at(i + 2)
                if value in ("", ","):
                    value, consumed = "", 2  # key= selects an empty value
                elif value in _SPECIAL or value in ("!=", "=="):
                    raise SelectorError(f"unable to parse requirement: found '{value}', expected: identifier")
                else:
                    consumed = 3
                if op in (">", "<"):
                    if not value.lstrip("-").isdigit():
                        raise SelectorError(
                            "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer"
                        )
                    requirements.append(Requirement(key, "gt" if op == ">" else "lt", (value,)))
                else:
                    _check_value(key, 0, value)
                    requirements.append(Requirement(key, "!=" if op == "!=" else "=", (value,)))
                i += consumed
            elif op in ("in", "notin"):
                if at(i + 2) != "(":
                    raise SelectorError(f"unable to parse requirement: found '{at(i + 2)}', expected: '('")
                values, i = _set_values(at, i + 3)
                for index, value in enumerate(values):
                    _check_value(key, index, value)
                requirements.append(Requirement(key, op, values))
            else:
                raise SelectorError(
                    f"unable to parse requirement: found '{op}', expected: in, notin, =, ==, !=, gt, lt"
                )
        if i < len(tokens):
            if tokens[i] != ",":
                raise SelectorError(f"found '{tokens[i]}', expected: ',' or 'end of string'")
            i += 1
            if i == len(tokens):
                raise SelectorError("found '', expected: identifier after ','")
    return LabelSelector(tuple(requirements))


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    field: str
    value: str
    equal: bool


@dataclass(frozen=True, slots=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...]

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        return all((fields.get(r.field, "") == r.value) == r.equal for r in self.requirements)

    def exact_name(self) -> str | None:
        """The name a ``metadata.name=x`` selector pins (lets a list read one key)."""
        for r in self.requirements:
            if r.field == "metadata.name" and r.equal:
                return r.value
        return None


NO_FIELDS = FieldSelector(())


def _split_unescaped(text: str, separator: str) -> list[str]:
    parts, current, escaped = [], "", False
    for char in text:
        if escaped:
            current += char
            escaped = False
        elif char == "\\":
            current += char
            escaped = True
        elif char == separator:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def _split_term(term: str) -> tuple[str, str, bool] | None:
    """field, value and whether the term asks for equality; None without an operator."""
    for op, equal in (("!=", False), ("==", True), ("=", True)):
        field, sep, value = term.partition(op)
        if sep:
            return field, value, equal
    return None


# The kinds whose field labels a conversion function of their own checks in kube-apiserver 1.32
# (pkg/apis/*/*/conversion.go's AddFieldLabelConversionFunc), by (group, version, kind); custom
# resources have one too (apiextensions-apiserver's converter). Any other kind's labels go through
# runtime.DefaultMetaV1FieldSelectorConversion, which words an unknown label its own way.
FIELD_LABEL_CONVERSIONS = frozenset(
    {("", "v1", kind) for kind in ("Pod", "Node", "ReplicationController", "Event", "Namespace", "Secret", "Service")}
    | {("batch", "v1", "Job"), ("batch", "v1beta1", "Job"), ("batch", "v1beta1", "CronJob")}
    | {("apps", version, "StatefulSet") for version in ("v1beta1", "v1beta2")}
    | {("certificates.k8s.io", v, "CertificateSigningRequest") for v in ("v1", "v1beta1")}
    | {("certificates.k8s.io", "v1alpha1", "ClusterTrustBundle")}
    | {("events.k8s.io", version, "Event") for version in ("v1", "v1beta1")}
    | {("resource.k8s.io", version, "ResourceSlice") for version in ("v1alpha3", "v1beta1")}
)


def unknown_field_label(field: str, own_conversion: bool) -> str:
    """Upstream's error for a label the kind cannot select on: its conversion function's, or the
    default conversion's."""
    if own_conversion:
        return f"field label not supported: {field}"
    return f'"{field}" is not a known field selector: only "metadata.name", "metadata.namespace"'


def parse_fields(text: str, selectable: tuple[str, ...], own_conversion: bool = True) -> FieldSelector:
    """Parse a field selector over the given fields; SelectorError as upstream words it (for a kind
    with a field label conversion of its own, or without)."""
    requirements = []
    for term in _split_unescaped(text, ","):
        if not term:
            continue
        split = _split_term(term)
        if split is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        field, value, equal = split
        field = field.strip()
        if field not in selectable:
            raise SelectorError(unknown_field_label(field, own_conversion))
        requirements.append(FieldRequirement(field, _unescape(value), equal))
    return FieldSelector(tuple(requirements))


def exact_name(text: str) -> str | None:
    """The name a field selector pins with ``metadata.name=x`` (or ``==``), whatever fields it
    names besides; None when it pins none or cannot be read (upstream's RequiresExactMatch)."""
    for term in _split_unescaped(text, ","):
        split = _split_term(term) if term else None
        if split is None:
            if term:
                return None
            continue
        field, value, equal = split
        if field.strip() == "metadata.name" and equal:
            return _unescape(value)
    return None


def label_selector(text: str) -> LabelSelector:
    try:
        return parse_labels(text) if text else EVERYTHING
    except SelectorError as err:
        raise errors.bad_request(str(err)) from None


def field_selector(text: str, selectable: tuple[str, ...], own_conversion: bool = True) -> FieldSelector:
    try:
        return parse_fields(text, selectable, own_conversion) if text else NO_FIELDS
    except SelectorError as err:
        raise errors.bad_request(str(err)) from None


@dataclass(frozen=True, slots=True)
class Filter:
    """What a list or watch selects: a namespace (or all), labels and fields."""

    namespace: str
    labels: LabelSelector
    fields: FieldSelector

    @property
    def has_selectors(self) -> bool:
        return not (self.labels.empty and self.fields.empty)

    def matches(self, namespace: str, labels: Mapping[str, str], fields: Callable[[], Mapping[str, str]]) -> bool:
        if self.namespace and namespace != self.namespace:
            return False
        if not self.labels.empty and not self.labels.matches(labels):
            return False
        return self.fields.empty or self.fields.matches(fields())


def label_selector_text(selector: Mapping[str, Any] | None) -> str:
    """A metav1.LabelSelector (as JSON) as upstream writes it as a selector string
    (LabelSelectorAsSelector(...).String()): requirements sorted by key, "" for none."""
    if not selector:
        return ""
    parts = [(key, f"{key}={value}") for key, value in dict(selector.get("matchLabels") or {}).items()]
    for expression in selector.get("matchExpressions") or ():
        key, operator = expression.get("key", ""), expression.get("operator", "")
        values = ",".join(sorted(expression.get("values") or ()))
        text = {
            "In": f"{key} in ({values})",
            "NotIn": f"{key} notin ({values})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(operator, "<error>")
        parts.append((key, text))
    return ",".join(text for _, text in sorted(parts))
