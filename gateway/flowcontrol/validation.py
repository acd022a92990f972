"""flowcontrol.apiserver.k8s.io/v1 (k8s.io/kubernetes pkg/apis/flowcontrol/validation, 1.32):
FlowSchemas and PriorityLevelConfigurations, including the fixed specs of the mandatory objects
(the ``exempt`` level may change only its ``spec.exempt``).

Registered into registry/validation's table by the composition root (gateway/app.py): the rules read
the mandatory objects (bootstrap.py) and shuffle sharding's bounds (shufflesharding.py)."""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.message import Message

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.gateway.errors import FieldError
from protokube.gateway.flowcontrol import bootstrap
from protokube.gateway.flowcontrol.shufflesharding import MAX_HASH_BITS, required_entropy_bits
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.meta import name_problems

PACKAGE = "k8s.io.api.flowcontrol.v1"
MAX_MATCHING_PRECEDENCE = 10000
MAX_QUEUES = 10_000_000
DISTINGUISHERS = ["ByNamespace", "ByUser"]
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"]
SUBJECT_KINDS = ["Group", "ServiceAccount", "User"]
LEVEL_TYPES = ["Exempt", "Limited"]
LIMIT_RESPONSES = ["Queue", "Reject"]
NS_INTRO = "each member of this list must be '*' or a DNS-1123 label; "
NON_NEGATIVE = "must be a non-negative integer"


def _label_problems(value: str) -> list[str]:
    return name_problems(opts.NAME_RULE_DNS1123_LABEL, value)


def _subdomain_problems(value: str) -> list[str]:
    return name_problems(opts.NAME_RULE_UNSPECIFIED, value)


# ---- FlowSchema -------------------------------------------------------------------------------


@validator(f"{PACKAGE}.FlowSchema")
def validate_flow_schema(obj: Message, old: Message | None) -> list[FieldError]:
    errors = flow_schema_spec(obj.metadata.name, obj.spec)
    mandatory = bootstrap.MANDATORY_SCHEMAS.get(obj.metadata.name)
    if mandatory is not None and not _same_spec(obj, mandatory):
        errors.append(FieldError.invalid("spec", "", f"spec of '{obj.metadata.name}' must equal the fixed value"))
    errors += conditions(obj.status.conditions)
    return errors


def flow_schema_spec(name: str, spec: Message) -> list[FieldError]:
    errors = []
    precedence = spec.matchingPrecedence
    if precedence <= 0:
        errors.append(FieldError.invalid("spec.matchingPrecedence", precedence, "must be a positive value"))
    if precedence > MAX_MATCHING_PRECEDENCE:
        detail = f"must not be greater than {MAX_MATCHING_PRECEDENCE}"
        errors.append(FieldError.invalid("spec.matchingPrecedence", precedence, detail))
    if precedence == 1 and name != bootstrap.EXEMPT:
        detail = "only the schema named 'exempt' may have matchingPrecedence 1"
        errors.append(FieldError.invalid("spec.matchingPrecedence", precedence, detail))
    if spec.HasField("distinguisherMethod") and spec.distinguisherMethod.type not in DISTINGUISHERS:
        field = "spec.distinguisherMethod.type"
        errors.append(FieldError.not_supported(field, spec.distinguisherMethod.type, DISTINGUISHERS))
    level = spec.priorityLevelConfiguration.name
    if level:
        errors += [
            FieldError.invalid("spec.priorityLevelConfiguration.name", level, p) for p in _subdomain_problems(level)
        ]
    else:
        errors.append(FieldError.required("spec.priorityLevelConfiguration.name", "must reference a priority level"))
    for i, rule in enumerate(spec.rules):
        errors += policy_rules(rule, f"spec.rules[{i}]")
    return errors


def policy_rules(rule: Message, path: str) -> list[FieldError]:
    errors = []
    if not rule.subjects:
        errors.append(FieldError.required(f"{path}.subjects", "subjects must contain at least one value"))
    for i, subject in enumerate(rule.subjects):
        errors += subject_problems(subject, f"{path}.subjects[{i}]")
    if not rule.resourceRules and not rule.nonResourceRules:
        errors.append(
            FieldError.required(path, "at least one of resourceRules and nonResourceRules has to be non-empty")
        )
    for i, resource_rule in enumerate(rule.resourceRules):
        errors += resource_rule_problems(resource_rule, f"{path}.resourceRules[{i}]")
    for i, non_resource_rule in enumerate(rule.nonResourceRules):
        errors += non_resource_rule_problems(non_resource_rule, f"{path}.nonResourceRules[{i}]")
    return errors


SUBJECT_MEMBERS = {"User": "user", "Group": "group", "ServiceAccount": "serviceAccount"}


def subject_problems(subject: Message, path: str) -> list[FieldError]:
    kind = subject.kind
    if kind not in SUBJECT_MEMBERS:
        return [FieldError.not_supported(f"{path}.kind", kind, SUBJECT_KINDS)]
    errors = []
    member = SUBJECT_MEMBERS[kind]
    if not subject.HasField(member):
        errors.append(FieldError.required(f"{path}.{member}", f"{member} is required when subject kind is '{kind}'"))
    elif kind == "ServiceAccount":
        account = subject.serviceAccount
        if not account.name:
            errors.append(FieldError.required(f"{path}.serviceAccount.name"))
        elif account.name != "*":
            problems = _subdomain_problems(account.name)
            errors += [FieldError.invalid(f"{path}.serviceAccount.name", account.name, p) for p in problems]
        if account.namespace:
            problems = _label_problems(account.namespace)
            errors += [FieldError.invalid(f"{path}.serviceAccount.namespace", account.namespace, p) for p in problems]
        else:
            detail = "must specify namespace for service account"
            errors.append(FieldError.required(f"{path}.serviceAccount.namespace", detail))
    elif not getattr(subject, member).name:
        errors.append(FieldError.required(f"{path}.{member}.name"))
    for other_kind, other in SUBJECT_MEMBERS.items():
        if other != member and subject.HasField(other):
            detail = f"{other} is forbidden when subject kind is not '{other_kind}'"
            errors.append(FieldError.forbidden(f"{path}.{other}", detail))
    return errors


def _verbs(verbs: Sequence[str], path: str) -> list[FieldError]:
    if not verbs:
        return [FieldError.required(f"{path}.verbs", "verbs must contain at least one value")]
    if "*" in verbs:
        if len(verbs) > 1:
            return [FieldError.invalid(f"{path}.verbs", list(verbs), "if '*' is present, must not specify other verbs")]
        return []
    if not set(verbs) <= set(VERBS):
        return [FieldError.not_supported(f"{path}.verbs", list(verbs), VERBS)]
    return []


def resource_rule_problems(rule: Message, path: str) -> list[FieldError]:
    errors = _verbs(rule.verbs, path)
    for field, what in (("apiGroups", "api group"), ("resources", "resource")):
        values = list(getattr(rule, field))
        if not values:
            detail = f"resource rules must supply at least one {what}"
            errors.append(FieldError.required(f"{path}.{field}", detail))
        elif len(values) > 1 and "*" in values:
            detail = f"if '*' is present, must not specify other {what}s"
            errors.append(FieldError.invalid(f"{path}.{field}", values, detail))
    namespaces = list(rule.namespaces)
    if not namespaces and not rule.clusterScope:
        detail = "resource rules that are not cluster scoped must supply at least one namespace"
        errors.append(FieldError.required(f"{path}.namespaces", detail))
    elif "*" in namespaces:
        if len(namespaces) > 1:
            detail = "if '*' is present, must not specify other namespaces"
            errors.append(FieldError.invalid(f"{path}.namespaces", namespaces, detail))
    else:
        for i, namespace in enumerate(namespaces):
            problems = _label_problems(namespace)
            errors += [FieldError.invalid(f"{path}.namespaces[{i}]", namespace, NS_INTRO + p) for p in problems]
    return errors


def non_resource_rule_problems(rule: Message, path: str) -> list[FieldError]:
    errors = _verbs(rule.verbs, path)
    urls = list(rule.nonResourceURLs)
    if not urls:
        errors.append(FieldError.required(f"{path}.nonResourceURLs", "nonResourceURLs must contain at least one value"))
    elif "*" in urls:
        if len(urls) > 1:
            detail = "if '*' is present, must not specify other non-resource URLs"
            errors.append(FieldError.invalid(f"{path}.nonResourceURLs", urls, detail))
    else:
        for i, url in enumerate(urls):
            problem = url_problem(url)
            if problem:
                errors.append(FieldError.invalid(f"{path}.nonResourceURLs[{i}]", url, problem))
    return errors


def url_problem(path: str) -> str:
    """upstream's ValidateNonResourceURLPath."""
    if not path:
        return "must not be empty"
    if path == "/":
        return ""
    if not path.startswith("/"):
        return "must start with slash"
    if " " in path:
        return "must not contain white-space"
    if "//" in path:
        return "must not contain double slash"
    wildcards = path.count("*")
    if wildcards > 1 or (wildcards == 1 and not path.endswith("/*")):
        return "wildcard can only do suffix matching"
    return ""


def conditions(items: Sequence[Message]) -> list[FieldError]:
    errors, seen = [], set()
    for i, condition in enumerate(items):
        path = f"status.conditions[{i}]"
        if condition.type in seen:
            errors.append(FieldError("FieldValueDuplicate", f"{path}.type", "", condition.type, True))
        seen.add(condition.type)
        if not condition.type:
            errors.append(FieldError.required(f"{path}.type", "must not be empty"))
    return errors


# ---- PriorityLevelConfiguration -----------------------------------------------------------------


@validator(f"{PACKAGE}.PriorityLevelConfiguration")
def validate_priority_level(obj: Message, old: Message | None) -> list[FieldError]:
    name, spec = obj.metadata.name, obj.spec
    errors = level_spec(name, spec)
    mandatory = bootstrap.MANDATORY_LEVELS.get(name)
    if mandatory is not None:
        if name == bootstrap.EXEMPT:  # the operator may tune spec.exempt
            compared = type(obj)()
            compared.CopyFrom(obj)
            compared.spec.ClearField("exempt")
            fixed = {k: v for k, v in mandatory.items() if k != "exempt"}
            if not _same_spec(compared, fixed):
                detail = f"spec of '{name}' except the 'spec.exempt' field must equal the fixed value"
                errors.append(FieldError.invalid("spec", "", detail))
        elif not _same_spec(obj, mandatory):
            errors.append(FieldError.invalid("spec", "", f"spec of '{name}' must equal the fixed value"))
    errors += conditions(obj.status.conditions)
    return errors


def level_spec(name: str, spec: Message) -> list[FieldError]:
    errors = []
    if (name == bootstrap.EXEMPT) != (spec.type == "Exempt"):
        errors.append(
            FieldError.invalid("spec.type", spec.type, "type must be 'Exempt' if and only if name is 'exempt'")
        )
    if spec.type == "Exempt":
        if spec.HasField("limited"):
            errors.append(FieldError.forbidden("spec.limited", "must be nil if the type is not Limited"))
        if spec.HasField("exempt"):
            exempt = spec.exempt
            if exempt.nominalConcurrencyShares < 0:
                value = exempt.nominalConcurrencyShares
                errors.append(FieldError.invalid("spec.exempt.nominalConcurrencyShares", value, NON_NEGATIVE))
            errors += _lendable(exempt, "spec.exempt")
    elif spec.type == "Limited":
        if spec.HasField("exempt"):
            errors.append(FieldError.forbidden("spec.exempt", "must be nil if the type is Limited"))
        if not spec.HasField("limited"):
            errors.append(FieldError.required("spec.limited", "must not be empty when type is Limited"))
        else:
            errors += limited(spec.limited)
    else:
        errors.append(FieldError.not_supported("spec.type", spec.type, LEVEL_TYPES))
    return errors


def _lendable(config: Message, path: str) -> list[FieldError]:
    if config.HasField("lendablePercent") and not 0 <= config.lendablePercent <= 100:
        detail = "must be between 0 and 100, inclusive"
        return [FieldError.invalid(f"{path}.lendablePercent", config.lendablePercent, detail)]
    return []


def limited(config: Message) -> list[FieldError]:
    path = "spec.limited"
    errors = []
    if config.nominalConcurrencyShares < 0:  # zero is allowed in v1
        value = config.nominalConcurrencyShares
        errors.append(FieldError.invalid(f"{path}.nominalConcurrencyShares", value, NON_NEGATIVE))
    errors += limit_response(config.limitResponse, f"{path}.limitResponse")
    errors += _lendable(config, path)
    if config.HasField("borrowingLimitPercent") and config.borrowingLimitPercent < 0:
        value = config.borrowingLimitPercent
        detail = "if specified, must be a non-negative integer"
        errors.append(FieldError.invalid(f"{path}.borrowingLimitPercent", value, detail))
    return errors


def limit_response(response: Message, path: str) -> list[FieldError]:
    if response.type == "Reject":
        if response.HasField("queuing"):
            return [FieldError.forbidden(f"{path}.queuing", "must be nil if limited.limitResponse.type is not Limited")]
        return []
    if response.type != "Queue":
        return [FieldError.not_supported(f"{path}.type", response.type, LIMIT_RESPONSES)]
    if not response.HasField("queuing"):
        return [FieldError.required(f"{path}.queuing", "must not be empty if limited.limitResponse.type is Limited")]
    return queuing(response.queuing, f"{path}.queuing")


def queuing(config: Message, path: str) -> list[FieldError]:
    errors = []
    if config.queueLengthLimit <= 0:
        errors.append(FieldError.invalid(f"{path}.queueLengthLimit", config.queueLengthLimit, "must be positive"))
    queues, hand = config.queues, config.handSize
    if queues <= 0:
        errors.append(FieldError.invalid(f"{path}.queues", queues, "must be positive"))
    elif queues > MAX_QUEUES:
        errors.append(FieldError.invalid(f"{path}.queues", queues, f"must not be greater than {MAX_QUEUES}"))
    if hand <= 0:
        errors.append(FieldError.invalid(f"{path}.handSize", hand, "must be positive"))
    elif hand > queues:
        errors.append(FieldError.invalid(f"{path}.handSize", hand, f"should not be greater than queues ({queues})"))
    elif required_entropy_bits(queues, hand) > MAX_HASH_BITS:
        detail = (
            f"required entropy bits of deckSize {queues} and handSize {hand} should not be greater than {MAX_HASH_BITS}"
        )
        errors.append(FieldError.invalid(f"{path}.handSize", hand, detail))
    return errors


def _same_spec(obj: Message, spec: dict) -> bool:
    """Whether ``obj``'s spec is the bootstrap ``spec`` (read through the same message type)."""
    expected = type(obj.spec)()
    _fill(expected, spec)
    return obj.spec == expected


def _fill(message: Message, values: dict) -> None:
    for key, value in values.items():
        if isinstance(value, dict):
            _fill(getattr(message, key), value)
            if not value:
                getattr(message, key).SetInParent()
        elif isinstance(value, list):
            target = getattr(message, key)
            for item in value:
                if isinstance(item, dict):
                    _fill(target.add(), item)
                else:
                    target.append(item)
        else:
            setattr(message, key, value)
