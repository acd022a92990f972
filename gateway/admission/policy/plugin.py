"""The ValidatingAdmissionPolicy admission plugin (k8s.io/apiserver admission/plugin/policy/
validating, 1.32): every binding of a policy whose matchConstraints take the request, and whose
own matchResources do, evaluates the policy once per param; a failed validation is acted on as
the binding's validationActions say — Deny refuses the request (the first denial, with upstream's
message and the validation's reason as code), Warn adds a ``Warning`` header, Audit has no audit
log to go to. Errors (evaluation, params, configuration) count as failures under failurePolicy
Fail and are ignored under Ignore."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

from protokube.gateway import errors
from protokube.gateway.admission import warnings
from protokube.gateway.admission.policy import matching
from protokube.gateway.admission.policy.compiled import Binding, Policy, PolicySet, compile_binding, compile_policy
from protokube.gateway.admission.policy.params import ConfigurationError, collect, unknown_param_kind
from protokube.gateway.admission.webhook.objects import codec_of, convert
from protokube.gateway.admission.webhook.rules import Invocation, exempt
from protokube.gateway.auth.authorization import Authorizer
from protokube.gateway.cel import CELEvaluationError, LazyMap, Program, cost, to_cel
from protokube.gateway.cel.admission import authorizer_value, request_map
from protokube.gateway.cel.cost import offloaded
from protokube.gateway.codecs import codec_for
from protokube.gateway.objects.codec import Codec
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.registry.admission import Attributes, forbidden
from protokube.gateway.watchcache.cacher import Cacher
from protokube.schema.registry import GroupVersionKind, Registry, Resource

POLICIES = ("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies")
BINDINGS = ("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings")
NAMESPACES = ("", "v1", "namespaces")
CODES = {"Unauthorized": 401, "Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}
MAX_MESSAGE_BYTES = 5 * 1024  # upstream's MaxEvaluatedMessageExpressionSizeBytes


@dataclass(frozen=True)
class Denial:
    message: str
    reason: str = ""


Denied = tuple[Policy, Binding | None, Denial]  # no binding: the policy's own configuration error


class _Request:
    """What one request's evaluations share: its values as CEL sees them, each made when a policy
    first reads it, in the version the policy took the request as."""

    def __init__(self, plugin: ValidatingAdmissionPolicy, attributes: Attributes) -> None:
        self.plugin = plugin
        self.attributes = attributes
        self._values: dict[tuple[str, tuple[str, str, str]], Any] = {}

    def values(self, names: frozenset[str], matched: Invocation) -> dict[str, Any]:
        """The request's variables among ``names`` (params and variables are the evaluation's)."""
        found: dict[str, Any] = {}
        for name in names & VALUES.keys():
            key = (name, matched.resource.key)
            if key not in self._values:
                self._values[key] = VALUES[name](self, matched)
            found[name] = self._values[key]
        return found

    def _object(self, matched: Invocation) -> Any:
        return to_cel(self.plugin.as_dict(self.attributes, self.attributes.obj, matched))

    def _old_object(self, matched: Invocation) -> Any:
        return to_cel(self.plugin.as_dict(self.attributes, self.attributes.old, matched))

    def _request(self, matched: Invocation) -> Any:
        return to_cel(request_map(self.attributes, matched=(matched.resource, matched.kind)))

    def _namespace_object(self, matched: Invocation) -> Any:
        return to_cel(self.plugin.namespace_object(self.attributes))

    def _authorizer(self, matched: Invocation) -> Any:
        return authorizer_value(self.plugin.authorizer, self.attributes)


VALUES: dict[str, Callable[[_Request, Invocation], Any]] = {
    "object": _Request._object,
    "oldObject": _Request._old_object,
    "request": _Request._request,
    "namespaceObject": _Request._namespace_object,
    "authorizer": _Request._authorizer,
}


class ValidatingAdmissionPolicy:
    def __init__(
        self, cachers: Mapping[tuple[str, str, str], Cacher], registry: Registry, authorizer: Authorizer
    ) -> None:
        self.cachers = cachers
        self.registry = registry
        self.authorizer = authorizer
        self._seen = (-1, -1)
        self._set = PolicySet()

    # ---- the stored policies and bindings ---------------------------------------------------------
    async def policy_set(self) -> PolicySet:
        """The policies and bindings, compiled again only when either changed; read from storage
        while the watch caches are not ready (the server's own first writes come before them)."""
        policies, bindings = self.cachers[POLICIES], self.cachers[BINDINGS]
        if not (policies.cache.ready.is_set() and bindings.cache.ready.is_set()):
            return _compiled(await _stored(policies), await _stored(bindings))
        seen = (policies.cache.last_change, bindings.cache.last_change)
        if seen != self._seen:
            views = [e.view for e in policies.cache.store.values()], [e.view for e in bindings.cache.store.values()]
            self._seen, self._set = seen, _compiled(*views)
        return self._set

    # ---- the request's values ----------------------------------------------------------------------
    def _codec(self, resource: Resource, kind: GroupVersionKind) -> Codec:
        cacher = self.cachers.get(resource.key)
        return codec_of(resource, kind, cacher.codec if cacher is not None else codec_for(resource))

    def as_dict(self, attributes: Attributes, obj: Any, matched: Invocation) -> dict[str, Any] | None:
        """``obj`` as JSON values, in the matched version (converted when that is another)."""
        if obj is None:
            return None
        codec = self._codec(matched.resource, matched.kind)
        if matched.resource is not attributes.resource:
            obj = convert(obj, self._codec(attributes.resource, attributes.kind), codec)
        return codec.to_dict(obj)

    def _namespace_view(self, attributes: Attributes) -> Any:
        if not attributes.namespace or not attributes.resource.namespaced:
            return None
        cacher = self.cachers.get(NAMESPACES)
        return cacher.cached("", attributes.namespace) if cacher is not None else None

    def namespace_object(self, attributes: Attributes) -> dict[str, Any] | None:
        """upstream's CreateNamespaceObject: the namespace's metadata (no managedFields), spec, status."""
        view = self._namespace_view(attributes)
        if view is None:
            return None
        value = view.codec.to_dict(view.obj)
        value.pop("apiVersion", None)
        value.pop("kind", None)
        value.get("metadata", {}).pop("managedFields", None)
        return value

    def _namespace_labels(self, attributes: Attributes) -> Mapping[str, str] | None:
        view = self._namespace_view(attributes)
        return view.obj.metadata.labels if view is not None else ({} if attributes.namespace else None)

    # ---- admission -----------------------------------------------------------------------------
    async def validate(self, attributes: Attributes) -> None:
        if exempt(attributes):
            return
        policies = await self.policy_set()
        if not policies.bindings:
            return
        request = _Request(self, attributes)
        denials: list[Denied] = []
        for policy_name in sorted(policies.bindings):
            policy = policies.policies.get(policy_name)
            matched = self._matches(policy.match, attributes) if policy is not None else None
            if policy is None or matched is None:
                continue
            error = unknown_param_kind(policy, self.registry, self.cachers)
            if error:
                if policy.fail:
                    denials.append((policy, None, Denial(f"failed to configure policy: {error}")))
                continue
            for binding in policies.bindings[policy_name]:
                if binding.match is not None and self._matches(binding.match, attributes) is None:
                    continue
                error, failures = await self._evaluate_binding(policy, binding, request, matched)
                if error:
                    denials.append((policy, binding, Denial(error)))
                for failure in failures:
                    self._act(policy, binding, failure, denials)
        if denials:
            raise _refusal(attributes, *denials[0])

    def _matches(self, match: matching.MatchResources | None, attributes: Attributes) -> Invocation | None:
        """The resource ``match`` takes the request as (None: it does not take it)."""
        if match is None:
            return None
        labels = self._namespace_labels(attributes) if match.namespace_selector.requirements else None
        return matching.matches(match, attributes, self.registry, labels)

    @staticmethod
    def _act(policy: Policy, binding: Binding, denial: Denial, denials: list[Denied]) -> None:
        for action in binding.actions:
            if action == "Deny":
                denials.append((policy, binding, denial))
            elif action == "Warn":
                warnings.add(
                    f"Validation failed for ValidatingAdmissionPolicy '{policy.name}' with binding "
                    f"'{binding.name}': {denial.message}"
                )

    async def _evaluate_binding(
        self, policy: Policy, binding: Binding, request: _Request, matched: Invocation
    ) -> tuple[str, list[Denial]]:
        """A configuration error (it denies whatever the binding's actions; "" under Ignore) and
        the failed validations of one binding."""
        if policy.error:  # as upstream, an expression that does not compile fails each evaluation
            return "", [Denial(f"compilation error: {policy.error}")] if policy.fail else []
        error = binding.error and f"failed to configure binding: {binding.error}"
        params: list[dict[str, Any] | None] = []
        if not error:
            try:
                params = collect(policy, binding, request.attributes, self.registry, self.cachers)
            except ConfigurationError as err:
                error = f"failed to configure binding: {err}"
        if error:
            return (error if policy.fail else ""), []
        failures: list[Denial] = []
        for param in params:
            values = request.values(policy.uses, matched)
            failures += await offloaded(functools.partial(_evaluate, policy, values, param))
        return "", failures


async def _stored(cacher: Cacher) -> list[ObjectView]:
    listed = await cacher.store.page("", "", 0, 0)
    return [cacher.store.view(kv) for kv in listed.kvs]


def _compiled(policies: list[ObjectView], bindings: list[ObjectView]) -> PolicySet:
    compiled = PolicySet()
    for view in policies:
        policy = compile_policy(view.codec.to_dict(view.obj))
        compiled.policies[policy.name] = policy
    for view in bindings:
        binding = compile_binding(view.codec.to_dict(view.obj))
        compiled.bindings.setdefault(binding.policy, []).append(binding)
    return compiled


def _evaluate(policy: Policy, base: dict[str, Any], params: dict[str, Any] | None) -> list[Denial]:
    """One evaluation of the policy's conditions and validations with ``params``, within one
    runtime cost budget (when run with a meter: ``cost.offloaded``), as upstream's: once it is
    spent, no further expression runs and the evaluation fails."""
    try:
        return _evaluate_within_budget(policy, base, params)
    except _OutOfBudget:
        return [Denial(cost.OUT_OF_BUDGET)] if policy.fail else []


class _OutOfBudget(Exception):
    """The evaluation's runtime cost budget is spent."""


def _spent() -> None:
    meter = cost.current()
    if meter is not None and meter.total > cost.RUNTIME_BUDGET:
        raise _OutOfBudget


def _evaluate_within_budget(policy: Policy, base: dict[str, Any], params: dict[str, Any] | None) -> list[Denial]:
    activation = dict(base)
    activation["params"] = to_cel(params)
    programs = dict(policy.variables)

    def variable(name: str) -> Any:
        try:
            return programs[name].evaluate(activation)
        except CELEvaluationError as err:
            return CELEvalError(f'composited variable "{name}" fails to evaluate: {err}')

    activation["variables"] = LazyMap(variable, programs)
    errored: list[str] = []
    for _, program in policy.conditions:  # as upstream's matcher: any false skips, errors fail
        try:
            if _result(program, activation) is False:
                return []
        except CELEvaluationError as err:
            errored.append(f"expression '{program.expression}' resulted in error: {err}")
    if errored:  # Go's utilerrors.NewAggregate
        return [Denial(errored[0] if len(errored) == 1 else f"[{', '.join(errored)}]")] if policy.fail else []
    denials: list[Denial] = []
    for validation in policy.validations:
        try:
            passed = _result(validation.program, activation) is True
        except CELEvaluationError as err:
            _spent()
            if policy.fail:
                denials.append(Denial(f"expression '{validation.expression}' resulted in error: {err}"))
            continue
        _spent()
        if passed:
            continue
        message = _message(validation.message_program, activation) or validation.message.strip()
        message = message or f"failed expression: {validation.expression.strip()}"
        denials.append(Denial(message, validation.reason or "Invalid"))
    for program in policy.audit_annotations:
        try:
            value = program.evaluate(activation)
        except CELEvaluationError as err:
            _spent()
            if policy.fail:
                denials.append(Denial(f"expression '{program.expression}' resulted in error: {err}"))
            continue
        _spent()
        if value is not None and not isinstance(value, str) and policy.fail:
            denials.append(
                Denial(
                    f"valueExpression '{program.expression}' resulted in unsupported return type: "
                    f"{_type_name(value)}. Return type must be either string or null."
                )
            )
    return denials


def _result(program: Program, activation: dict[str, Any]) -> bool | None:
    value = program.evaluate(activation)
    return bool(value) if isinstance(value, bool | celtypes.BoolType) else None


def _message(program: Program | None, activation: dict[str, Any]) -> str:
    """messageExpression's string, when it is one: trimmed, one line, not too long."""
    if program is None:
        return ""
    try:
        value = program.evaluate(activation)
    except CELEvaluationError:
        return ""
    if not isinstance(value, str):  # cel-python's string operations may give a plain str
        return ""
    text = str(value).strip()
    if len(text.encode()) > MAX_MESSAGE_BYTES or "\n" in text:
        return ""
    return text


def _type_name(value: Any) -> str:
    names = {celtypes.BoolType: "bool", celtypes.IntType: "int", celtypes.DoubleType: "double"}
    return next((name for cls, name in names.items() if isinstance(value, cls)), type(value).__name__)


def _refusal(attributes: Attributes, policy: Policy, binding: Binding | None, denial: Denial) -> errors.StatusError:
    """upstream: NewForbidden with the policy's message, the validation's reason (Invalid when it
    has none) and its code, and the message once more as a cause."""
    named = f"ValidatingAdmissionPolicy '{policy.name}'"
    if binding is not None:
        named += f" with binding '{binding.name}'"
    message = f"{named} denied request: {denial.message}"
    refusal = forbidden(attributes, message)
    reason = denial.reason or "Invalid"
    refusal.status.reason = reason
    refusal.status.code = CODES.get(reason, 422)
    refusal.status.details.causes.add(message=message)
    return refusal
