"""status.typeChecking of a ValidatingAdmissionPolicy (upstream's TypeChecker), as far as this
server computes it: the kinds its matchConstraints name without wildcards (at most 10), and for
each validation's expression and messageExpression, the fields ``object.`` and ``oldObject.``
select that the kind does not have — cel-go's ``undefined field 'x'`` — from the kinds' compiled
messages (custom resources' schemas and every other type error are not checked)."""

from __future__ import annotations

from typing import Any

import lark

from protokube.gateway.cel import CELCompileError
from protokube.gateway.cel.program import issue, parse
from protokube.schema.registry import Registry, Resource
from protokube.schema.shape import MessageShape, shape

MAX_TYPES = 10  # upstream's maxTypesToCheck
ROOTS = frozenset({"object", "oldObject"})
Value = dict[str, Any]


def expression_warnings(policy: Value, registry: Registry) -> list[Value]:
    """The policy's expressionWarnings: {fieldRef, warning} per expression with issues."""
    kinds = checked_kinds(policy, registry)
    if not kinds:
        return []
    found: list[Value] = []
    for i, validation in enumerate((policy.get("spec") or {}).get("validations") or ()):
        for key in ("expression", "messageExpression"):
            expression = validation.get(key) or ""
            results = [f"{_gvk(kind)}: {text}\n" for kind in kinds if (text := field_issues(expression, kind.message))]
            if results:
                found.append({"fieldRef": f"spec.validations[{i}].{key}", "warning": "\n".join(results)})
    return found


def checked_kinds(policy: Value, registry: Registry) -> list[Resource]:
    """The compiled kinds the policy's resourceRules name exactly, by group, version and kind."""
    constraints = (policy.get("spec") or {}).get("matchConstraints") or {}
    found: dict[tuple[str, str, str], Resource] = {}
    for rule in constraints.get("resourceRules") or ():
        groups, versions = rule.get("apiGroups") or [], rule.get("apiVersions") or []
        if any("*" in g for g in groups) or any("*" in v for v in versions):
            continue
        plurals = [r for r in rule.get("resources") or () if "*" not in r and "/" not in r]
        for group in sorted(groups):
            for version in sorted(versions):
                for plural in sorted(plurals):
                    resource = registry.resource(group, version, plural)
                    if resource is not None and resource.message and len(found) < MAX_TYPES:
                        found[(group, version, resource.gvk.kind)] = resource
    return [found[key] for key in sorted(found)]


def _gvk(resource: Resource) -> str:
    gvk = resource.gvk
    return f"{gvk.group}/{gvk.version}, Kind={gvk.kind}"


def field_issues(expression: str, message: str) -> str:
    """cel-go's issues for the undefined fields ``expression`` selects on objects of ``message``."""
    try:
        ast = parse(expression)
    except CELCompileError:
        return ""  # reported as what does not compile
    issues: dict[tuple[int, int], str] = {}
    for node in ast.iter_subtrees_topdown():
        if node.data != "member_dot":
            continue
        chain = _chain(node)
        if chain is None:
            continue
        undefined = _undefined(shape(message), chain)
        if undefined is not None:
            line, column = undefined.line or 1, max((undefined.column or 2) - 1, 1)  # at the '.'
            issues.setdefault((line, column), issue(expression, line, column, f"undefined field '{undefined}'"))
    return "\n".join(issues[key] for key in sorted(issues))


def _chain(node: lark.Tree) -> list[lark.Token] | None:
    """The fields a selection chain rooted at object or oldObject selects, outermost last."""
    tokens: list[lark.Token] = []
    current: Any = node
    while True:
        while isinstance(current, lark.Tree) and current.data in ("member", "primary") and len(current.children) == 1:
            current = current.children[0]
        if isinstance(current, lark.Tree) and current.data == "member_dot":
            tokens.append(current.children[1])
            current = current.children[0]
            continue
        if isinstance(current, lark.Tree) and current.data == "ident" and current.children[0] in ROOTS:
            return tokens[::-1]
        return None


def _undefined(root: MessageShape, tokens: list[lark.Token]) -> lark.Token | None:
    current: MessageShape | None = root
    for token in tokens:
        if current is None:
            return None  # a map, a list, a scalar or a value of a special JSON form: not checked
        path = current.by_json.get(str(token))
        if path is None:
            if current.has_type_meta and token in ("apiVersion", "kind"):
                return None
            return token
        field = path[-1]
        plain = field.message and not (field.is_map or field.repeated or field.special)
        current = shape(field.message) if plain else None
    return None
