"""ValidatingAdmissionPolicy on a real server: policies and bindings enforced in admission (deny,
warn, audit; params; variables; messageExpression; matchConditions; namespaceSelector; custom
resources), refused at write when an expression does not compile or calls a function this server
does not have, and their status kept by the status controller. Messages as kube-apiserver 1.32's.

Every policy here selects the test's own namespace, and is deleted with its binding at the end of
the test (they are cluster-scoped objects of the shared server)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from .helpers import Kubectl, eventually

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
POLICIES = f"{ADMISSION}/validatingadmissionpolicies"
BINDINGS = f"{ADMISSION}/validatingadmissionpolicybindings"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
NO_DENY_LABEL = "!has(object.metadata.labels) || !('deny' in object.metadata.labels)"
_names = itertools.count()

Make = Callable[..., tuple[str, str]]


def _configmaps(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps"


def _rules(resources: list[str], groups: list[str] | None = None) -> list[dict[str, Any]]:
    return [
        {
            "apiGroups": groups or [""],
            "apiVersions": ["*"],
            "operations": ["CREATE", "UPDATE"],
            "resources": resources,
        }
    ]


@pytest.fixture
def make_policy(client: httpx.Client, namespace: str) -> Iterator[Make]:
    """Creates a policy and its binding, scoped to the test's namespace, and waits until admission
    enforces it (a probe object the policy takes is refused, or warned about); returns the names."""
    made: list[tuple[str, str]] = []

    def make(
        validations: list[dict[str, Any]],
        *,
        actions: tuple[str, ...] = ("Deny",),
        resources: tuple[str, ...] = ("configmaps",),
        groups: tuple[str, ...] = ("",),
        spec: dict[str, Any] | None = None,
        binding_spec: dict[str, Any] | None = None,
        namespace_selector: dict[str, Any] | None = None,
        wait: Callable[[], bool] | None = None,
    ) -> tuple[str, str]:
        index = next(_names)
        policy, binding = f"vap-{namespace}-{index}.example.com", f"vap-{namespace}-{index}-binding"
        selector = namespace_selector or {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
        body = {
            "metadata": {"name": policy},
            "spec": {
                "matchConstraints": {
                    "resourceRules": _rules(list(resources), list(groups)),
                    "namespaceSelector": selector,
                },
                "validations": validations,
                **(spec or {}),
            },
        }
        response = client.post(POLICIES, json=body)
        assert response.status_code == 201, response.text
        made.append((POLICIES, policy))
        binding_body = {
            "metadata": {"name": binding},
            "spec": {"policyName": policy, "validationActions": list(actions), **(binding_spec or {})},
        }
        response = client.post(BINDINGS, json=binding_body)
        assert response.status_code == 201, response.text
        made.append((BINDINGS, binding))
        if wait is not None:
            assert eventually(wait), f"policy {policy} was not enforced"
        return policy, binding

    yield make
    for path, name in reversed(made):
        client.delete(f"{path}/{name}")


def _refused(
    client: httpx.Client, namespace: str, data: dict[str, str] | None = None, labels: dict[str, str] | None = None
) -> Callable[[], bool]:
    """A probe: a dry-run create of a ConfigMap is refused."""

    def probe() -> bool:
        body = {"metadata": {"generateName": "probe-", "labels": labels or {}}, "data": data or {}}
        return client.post(_configmaps(namespace), json=body, params={"dryRun": "All"}).status_code != 201

    return probe


def _create(client: httpx.Client, namespace: str, name: str, **fields: Any) -> httpx.Response:
    return client.post(
        _configmaps(namespace), json={"metadata": {"name": name, **fields.pop("metadata", {})}, **fields}
    )


def test_a_denied_request_has_upstreams_status(client: httpx.Client, namespace: str, make_policy: Make) -> None:
    policy, binding = make_policy(
        [{"expression": NO_DENY_LABEL}], wait=_refused(client, namespace, labels={"deny": "yes"})
    )
    response = _create(client, namespace, "c1", metadata={"labels": {"deny": "yes"}})
    assert response.status_code == 422
    status = response.json()
    denied = f"ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request"
    message = f"{denied}: failed expression: {NO_DENY_LABEL}"
    assert status["reason"] == "Invalid"
    assert status["message"] == f'configmaps "c1" is forbidden: {message}'
    assert status["details"] == {"name": "c1", "kind": "configmaps", "causes": [{"message": message}]}
    assert _create(client, namespace, "c2").status_code == 201


def test_type_denotations(client: httpx.Client, namespace: str, make_policy: Make) -> None:
    """CEL's type names (``type(x) == string``), as cel-go has them: a ConfigMap's name is a string
    and its metadata a map; its data values, strings, are no ints. ``int.x`` names nothing."""
    typed = "type(object.metadata.name) == string && type(object.metadata) == map && type(int) == type"
    no_int = "!has(object.data) || !('n' in object.data) || type(object.data.n) == int"
    make_policy([{"expression": typed}, {"expression": no_int}], wait=_refused(client, namespace, data={"n": "1"}))
    assert _create(client, namespace, "typed", data={"k": "v"}).status_code == 201
    refused = _create(client, namespace, "untyped", data={"n": "1"})
    assert refused.status_code == 422, refused.text
    assert refused.json()["message"].endswith(f"failed expression: {no_int}")
    wrong = client.post(POLICIES, json=_policy_body("type-member.example.com", "int.x == 1"))
    assert wrong.status_code == 422
    assert "undeclared reference to 'int.x' (in container '')" in wrong.json()["message"]


def test_kubectl_label_is_denied(client: httpx.Client, namespace: str, make_policy: Make, kubectl: Kubectl) -> None:
    assert _create(client, namespace, "d1").status_code == 201
    policy, binding = make_policy(
        [{"expression": NO_DENY_LABEL, "message": "the deny label is not allowed"}],
        wait=_refused(client, namespace, labels={"deny": "yes"}),
    )
    result = kubectl.run("label", "cm", "d1", "deny=yes", "-n", namespace, check=False)
    assert result.returncode != 0
    assert (
        f"ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: the deny label is not allowed"
        in result.stderr
    )
    labels = client.get(f"{_configmaps(namespace)}/d1").json()["metadata"].get("labels") or {}
    assert "deny" not in labels


def test_warn_and_audit_let_the_request_through(client: httpx.Client, namespace: str, make_policy: Make) -> None:
    def warned() -> bool:
        body = {"metadata": {"generateName": "probe-"}, "data": {"color": "red"}}
        response = client.post(_configmaps(namespace), json=body, params={"dryRun": "All"})
        return "Warning" in response.headers

    policy, binding = make_policy(
        [
            {
                "expression": "!has(object.data) || !('color' in object.data) || object.data.color != 'red'",
                "message": "no red",
            }
        ],
        actions=("Warn", "Audit"),
        wait=warned,
    )
    response = _create(client, namespace, "w1", data={"color": "red"})
    assert response.status_code == 201
    assert response.headers.get_list("Warning") == [
        f"299 - \"Validation failed for ValidatingAdmissionPolicy '{policy}' with binding '{binding}': no red\""
    ]
    response = _create(client, namespace, "w2", data={"color": "blue"})
    assert response.status_code == 201 and "Warning" not in response.headers


def test_audit_alone_admits_silently(client: httpx.Client, namespace: str, make_policy: Make) -> None:
    make_policy([{"expression": "false"}], actions=("Audit",))
    assert eventually(lambda: client.get(BINDINGS).status_code == 200)
    response = _create(client, namespace, "a1")
    assert response.status_code == 201 and "Warning" not in response.headers


def test_reason_sets_the_code_and_message_expression_the_message(
    client: httpx.Client, namespace: str, make_policy: Make
) -> None:
    policy, binding = make_policy(
        [
            {
                "expression": "object.metadata.name.startsWith('ok-')",
                "messageExpression": "'name ' + object.metadata.name + ' must start with ok-'",
                "message": "unused",
                "reason": "Forbidden",
            }
        ],
        wait=_refused(client, namespace),
    )
    response = _create(client, namespace, "bad")
    assert response.status_code == 403
    assert response.json()["reason"] == "Forbidden"
    assert response.json()["message"].endswith(
        f"ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: name bad must start with ok-"
    )
    assert _create(client, namespace, "ok-1").status_code == 201


def test_variables_are_evaluated_lazily_and_composed(client: httpx.Client, namespace: str, make_policy: Make) -> None:
    make_policy(
        [{"expression": "variables.size <= 2", "messageExpression": "'too many keys: ' + string(variables.size)"}],
        spec={
            "variables": [
                {"name": "keys", "expression": "has(object.data) ? object.data : {}"},
                {"name": "size", "expression": "size(variables.keys)"},
                {"name": "broken", "expression": "object.missing.field"},
            ]
        },
        wait=_refused(client, namespace, data={"a": "1", "b": "2", "c": "3"}),
    )
    response = _create(client, namespace, "v1", data={"a": "1", "b": "2", "c": "3"})
    assert response.status_code == 422
    assert response.json()["message"].endswith("denied request: too many keys: 3")
    assert _create(client, namespace, "v2", data={"a": "1"}).status_code == 201


def test_match_conditions_narrow_the_policy(client: httpx.Client, namespace: str, make_policy: Make) -> None:
    make_policy(
        [{"expression": "false", "message": "guarded"}],
        spec={
            "matchConditions": [{"name": "guarded-only", "expression": "object.metadata.name.startsWith('guarded')"}]
        },
        wait=lambda: _create(client, namespace, "guarded-probe").status_code == 422,
    )
    assert _create(client, namespace, "guarded-1").status_code == 422
    assert _create(client, namespace, "free-1").status_code == 201


def test_namespace_selector_and_namespace_object(client: httpx.Client, namespace: str, make_policy: Make) -> None:
    other = f"{namespace}-prod"
    assert (
        client.post("/api/v1/namespaces", json={"metadata": {"name": other, "labels": {"env": "prod"}}}).status_code
        == 201
    )
    try:
        make_policy(
            [
                {
                    "expression": "false",
                    "messageExpression": "'no configmaps in ' + namespaceObject.metadata.name",
                }
            ],
            namespace_selector={"matchLabels": {"env": "prod"}},
            wait=_refused(client, other),
        )
        response = _create(client, other, "p1")
        assert response.status_code == 422
        assert response.json()["message"].endswith(f"denied request: no configmaps in {other}")
        assert _create(client, namespace, "p1").status_code == 201
    finally:
        client.delete(f"/api/v1/namespaces/{other}")


def _params(client: httpx.Client, namespace: str, name: str, limit: str, labels: dict[str, str] | None = None) -> None:
    body = {"metadata": {"name": name, "labels": labels or {}}, "data": {"maxKeys": limit}}
    assert client.post(_configmaps(namespace), json=body).status_code == 201


PARAM_SPEC = {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}
MAX_KEYS = [
    {
        "expression": "!has(object.data) || size(object.data) <= int(params.data.maxKeys)",
        "messageExpression": "'at most ' + params.data.maxKeys + ' keys'",
    }
]


def _not_params(namespace: str) -> dict[str, Any]:
    """Match conditions leaving the params ConfigMaps themselves alone."""
    return {"matchConditions": [{"name": "not-params", "expression": "!object.metadata.name.startsWith('limit')"}]}


def test_params_by_name(client: httpx.Client, namespace: str, make_policy: Make) -> None:
    _params(client, namespace, "limit", "1")
    make_policy(
        MAX_KEYS,
        spec={**PARAM_SPEC, **_not_params(namespace)},
        binding_spec={"paramRef": {"name": "limit", "namespace": namespace, "parameterNotFoundAction": "Deny"}},
        wait=_refused(client, namespace, data={"a": "1", "b": "2"}),
    )
    response = _create(client, namespace, "x1", data={"a": "1", "b": "2"})
    assert response.status_code == 422 and response.json()["message"].endswith("denied request: at most 1 keys")
    assert _create(client, namespace, "x2", data={"a": "1"}).status_code == 201


def test_params_by_selector_are_each_evaluated(client: httpx.Client, namespace: str, make_policy: Make) -> None:
    _params(client, namespace, "limit-loose", "5", {"policy": "limits"})
    _params(client, namespace, "limit-strict", "2", {"policy": "limits"})
    make_policy(
        MAX_KEYS,
        spec={**PARAM_SPEC, **_not_params(namespace)},
        binding_spec={
            "paramRef": {"selector": {"matchLabels": {"policy": "limits"}}, "parameterNotFoundAction": "Deny"}
        },
        wait=_refused(client, namespace, data={"a": "1", "b": "2", "c": "3"}),
    )
    response = _create(client, namespace, "s1", data={"a": "1", "b": "2", "c": "3"})
    assert response.status_code == 422 and response.json()["message"].endswith("denied request: at most 2 keys")
    assert _create(client, namespace, "s2", data={"a": "1", "b": "2"}).status_code == 201


def test_missing_params_deny_or_allow_as_the_binding_says(
    client: httpx.Client, namespace: str, make_policy: Make
) -> None:
    policy, binding = make_policy(
        MAX_KEYS,
        spec=PARAM_SPEC,
        binding_spec={"paramRef": {"name": "absent", "parameterNotFoundAction": "Deny"}},
        wait=_refused(client, namespace),
    )
    response = _create(client, namespace, "m1")
    assert response.status_code == 422
    assert response.json()["message"] == (
        f"configmaps \"m1\" is forbidden: ValidatingAdmissionPolicy '{policy}' with binding '{binding}' "
        "denied request: "
        "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
    )
    client.delete(f"{BINDINGS}/{binding}")
    allowing = {
        "metadata": {"name": binding},
        "spec": {
            "policyName": policy,
            "validationActions": ["Deny"],
            "paramRef": {"name": "absent", "parameterNotFoundAction": "Allow"},
        },
    }
    assert eventually(lambda: client.post(BINDINGS, json=allowing).status_code == 201)
    assert eventually(lambda: _create(client, namespace, "m2").status_code == 201)


def test_a_policy_on_a_custom_resource(client: httpx.Client, namespace: str, make_policy: Make) -> None:
    group = f"vap{namespace}.example.com"
    crd = {
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }
    assert client.post(CRDS, json=crd).status_code == 201
    try:
        widgets = f"/apis/{group}/v1/namespaces/{namespace}/widgets"

        def widget(name: str, size: int) -> httpx.Response:
            body = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": size}}
            return client.post(widgets, json=body)

        assert eventually(lambda: widget("first", 1).status_code == 201, timeout=30)
        make_policy(
            [{"expression": "object.spec.size <= 100", "message": "size must be at most 100"}],
            resources=("widgets",),
            groups=(group,),
            wait=lambda: widget("probe", 1000).status_code == 422,
        )
        response = widget("big", 1000)
        assert response.status_code == 422
        assert response.json()["message"].endswith("denied request: size must be at most 100")
        assert response.json()["message"].startswith(f'widgets.{group} "big" is forbidden: ')
        assert widget("small", 10).status_code == 201
    finally:
        client.delete(f"{CRDS}/widgets.{group}")


def test_failure_policy_on_evaluation_errors(client: httpx.Client, namespace: str, make_policy: Make) -> None:
    policy, _ = make_policy(
        [{"expression": "object.data.missing == 'x'"}],
        wait=lambda: _create(client, namespace, "probe-e").status_code == 422,
    )
    response = _create(client, namespace, "e1", data={"a": "1"})
    assert response.status_code == 422
    assert response.json()["message"].endswith(
        "denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing"
    )
    ignoring = client.get(f"{POLICIES}/{policy}").json()
    ignoring["spec"]["failurePolicy"] = "Ignore"
    assert client.put(f"{POLICIES}/{policy}", json=ignoring).status_code == 200
    assert eventually(lambda: _create(client, namespace, "e2", data={"a": "1"}).status_code == 201)


def _policy_body(name: str, expression: str, **validation: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {"resourceRules": _rules(["configmaps"])},
            "validations": [{"expression": expression, **validation}],
        },
    }


def test_an_expression_that_does_not_compile_is_refused(client: httpx.Client) -> None:
    response = client.post(POLICIES, json=_policy_body("broken.example.com", "object.metadata.name =="))
    assert response.status_code == 422
    status = response.json()
    assert status["reason"] == "Invalid"
    cause = status["details"]["causes"][0]
    assert cause["field"] == "spec.validations[0].expression"
    assert cause["message"].startswith(
        'Invalid value: "object.metadata.name ==": compilation failed: ERROR: <input>:1:'
    )
    response = client.post(POLICIES, json=_policy_body("undeclared.example.com", "params.x == 1"))
    assert response.status_code == 422
    assert "undeclared reference to 'params'" in response.json()["message"]


def test_an_unavailable_extension_function_is_refused_by_name(client: httpx.Client) -> None:
    body = _policy_body("reverse.example.com", "true", messageExpression="object.metadata.name.reverse()")
    response = client.post(POLICIES, json=body)
    assert response.status_code == 422
    cause = response.json()["details"]["causes"][0]
    assert cause["field"] == "spec.validations[0].messageExpression"
    assert "undeclared reference to 'reverse'" in cause["message"]
    body = _policy_body("dns.example.com", "!format.dns1123Label().validate(object.metadata.name).hasValue()")
    assert "undeclared reference to 'format.dns1123Label'" in client.post(POLICIES, json=body).json()["message"]
    accepted = _policy_body(
        "libraries.example.com",
        "quantity('1Gi').isGreaterThan(quantity('1Mi')) && isURL('https://x') && sets.contains([1, 2], [1])"
        " && '%s'.format([object.metadata.name]) != ''",
    )
    assert client.post(POLICIES, json=accepted).status_code == 201
    client.delete(f"{POLICIES}/libraries.example.com")


def test_bindings_are_validated(client: httpx.Client) -> None:
    body = {"metadata": {"name": "bad-binding"}, "spec": {"policyName": "p", "validationActions": ["Deny", "Warn"]}}
    response = client.post(BINDINGS, json=body)
    assert response.status_code == 422
    assert "must not contain both Deny and Warn" in response.json()["message"]


def test_status_observes_each_generation(client: httpx.Client, namespace: str, make_policy: Make) -> None:
    """observedGeneration, and typeChecking's warnings for the kinds the rules name without wildcards."""
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]
    selector = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
    policy, _ = make_policy(
        [{"expression": "true"}], spec={"matchConstraints": {"resourceRules": rules, "namespaceSelector": selector}}
    )

    def observed() -> dict[str, Any] | None:
        current = client.get(f"{POLICIES}/{policy}").json()
        status = current.get("status") or {}
        if status.get("observedGeneration") == current["metadata"]["generation"]:
            return status
        return None

    assert eventually(observed) == {"observedGeneration": 1, "typeChecking": {}}
    current = client.get(f"{POLICIES}/{policy}").json()
    current["spec"]["validations"].append({"expression": "object.dataa.x == 'y'"})
    assert client.put(f"{POLICIES}/{policy}", json=current).status_code == 200
    status = eventually(observed) or {}
    assert status.get("observedGeneration") == 2
    assert status["typeChecking"] == {
        "expressionWarnings": [
            {
                "fieldRef": "spec.validations[1].expression",
                "warning": "/v1, Kind=ConfigMap: ERROR: <input>:1:7: undefined field 'dataa'\n"
                " | object.dataa.x == 'y'\n"
                " | ......^\n",
            }
        ]
    }


def test_request_old_object_and_authorizer(client: httpx.Client, namespace: str, make_policy: Make) -> None:
    """An update may not change data.owner unless the user may delete pods in the namespace (the
    test acts as system:masters, so it may); the message names the operation and the user."""
    assert _create(client, namespace, "r1", data={"owner": "a"}).status_code == 201
    make_policy(
        [
            {
                "expression": "request.operation != 'UPDATE' || object.data.owner == oldObject.data.owner",
                "messageExpression": "request.operation + ' by ' + request.userInfo.username + ' changes the owner'",
            },
            {
                "expression": "authorizer.group('').resource('pods').namespace(request.namespace).check('delete')"
                ".allowed() && authorizer.requestResource.check('create').allowed()",
                "message": "not allowed",
            },
        ],
        wait=lambda: (
            client.put(
                f"{_configmaps(namespace)}/r1",
                json={"metadata": {"name": "r1"}, "data": {"owner": "b"}},
                params={"dryRun": "All"},
            ).status_code
            == 422
        ),
    )
    response = client.put(f"{_configmaps(namespace)}/r1", json={"metadata": {"name": "r1"}, "data": {"owner": "b"}})
    assert response.status_code == 422
    assert response.json()["message"].endswith("denied request: UPDATE by system:unsecured changes the owner")
    unchanged = {"metadata": {"name": "r1"}, "data": {"owner": "a", "more": "x"}}
    assert client.put(f"{_configmaps(namespace)}/r1", json=unchanged).status_code == 200


def test_match_policy_equivalent_sees_the_matched_version(
    client: httpx.Client, namespace: str, make_policy: Make
) -> None:
    """A policy on a CRD's v1 takes a write at v2 (matchPolicy Equivalent, the default) and sees
    the object at v1, request.kind v1 and request.requestKind v2; with Exact it does not take it."""
    group = f"vapeq{namespace}.example.com"
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    crd = {
        "metadata": {"name": f"gadgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": schema},
                {"name": "v2", "served": True, "storage": False, "schema": schema},
            ],
        },
    }
    assert client.post(CRDS, json=crd).status_code == 201
    try:

        def gadget(name: str, version: str = "v2") -> httpx.Response:
            body = {"apiVersion": f"{group}/{version}", "kind": "Gadget", "metadata": {"name": name}}
            return client.post(f"/apis/{group}/{version}/namespaces/{namespace}/gadgets", json=body)

        assert eventually(lambda: gadget("first").status_code == 201, timeout=30)
        rules = [{"apiGroups": [group], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["gadgets"]}]
        selector = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
        policy, _ = make_policy(
            [
                {
                    "expression": "false",
                    "messageExpression": "object.apiVersion + ' ' + request.kind.version + ' '"
                    " + request.requestKind.version + ' ' + request.resource.version",
                }
            ],
            spec={"matchConstraints": {"resourceRules": rules, "namespaceSelector": selector}},
            wait=lambda: gadget("probe").status_code == 422,
        )
        response = gadget("second")
        assert response.status_code == 422
        assert response.json()["message"].endswith(f"denied request: {group}/v1 v1 v2 v1")
        exact = client.get(f"{POLICIES}/{policy}").json()
        exact["spec"]["matchConstraints"]["matchPolicy"] = "Exact"
        assert client.put(f"{POLICIES}/{policy}", json=exact).status_code == 200
        assert eventually(lambda: gadget("third").status_code == 201)
        assert gadget("fourth", "v1").status_code == 422
    finally:
        client.delete(f"{CRDS}/gadgets.{group}")


def test_param_kind_not_served_and_binding_without_param_ref(
    client: httpx.Client, namespace: str, make_policy: Make
) -> None:
    """A paramKind no resource serves is the policy's configuration error (failurePolicy Fail:
    denied, naming no binding); a binding without paramRef evaluates with params null."""
    policy, _ = make_policy(
        [{"expression": "true"}],
        spec={"paramKind": {"apiVersion": "example.com/v1", "kind": "Missing"}},
        wait=_refused(client, namespace),
    )
    response = _create(client, namespace, "k1")
    assert response.status_code == 422
    assert response.json()["message"] == (
        f"configmaps \"k1\" is forbidden: ValidatingAdmissionPolicy '{policy}' denied request: failed to configure "
        "policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Missing'"
    )
    make_policy(
        [{"expression": "params == null && !object.metadata.name.startsWith('null')", "message": "params is null"}],
        spec={"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}, "failurePolicy": "Ignore"},
    )
    client.delete(f"{POLICIES}/{policy}")
    assert eventually(lambda: _create(client, namespace, "null-params").status_code == 422)
    assert _create(client, namespace, "null-params-2").json()["message"].endswith("denied request: params is null")
