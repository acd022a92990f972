"""Upstream's validation of each kind, against a real server: invalid objects get kube-apiserver's
422 Invalid Status — the whole message and one cause per error (type, field, message), written
here from upstream's validation code — whatever the fieldValidation level, and nothing is stored;
valid objects (and allowed updates) are still accepted."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

Cause = tuple[str, str, str]  # reason, field, message

LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
    "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)
POD_UPDATE_MSG = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"
)
LABELS = {"app": "web"}


def pod(name: str, *containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": list(containers), **spec},
    }


def template(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "web", "image": "nginx"}], **spec}}


def deployment(name: str, **spec: Any) -> dict[str, Any]:
    body = {"selector": {"matchLabels": LABELS}, "template": template(), **spec}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": body}


def expect_invalid(response: httpx.Response, kind: str, name: str, causes: list[Cause], group: str = "") -> None:
    """A 422 Invalid Status naming ``kind.group "name"``, with ``causes`` in order (message: all of them)."""
    assert response.status_code == 422, response.text
    status = response.json()
    texts = list(dict.fromkeys(f"{field}: {message}" for _, field, message in causes))
    listed = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    qualified = f"{kind}.{group}" if group else kind
    details: dict[str, Any] = {
        "name": name,
        "kind": kind,
        "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes],
    }
    if group:
        details["group"] = group
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{qualified} "{name}" is invalid: {listed}',
        "reason": "Invalid",
        "details": details,
        "code": 422,
    }


def test_pod_containers(client: httpx.Client, namespace: str) -> None:
    body = pod(
        "p1",
        {"name": "web", "image": "nginx", "ports": [{"containerPort": 70000, "protocol": "HTTP"}]},
        {"name": "web", "image": ""},
        {"name": "Side_Car", "image": "busybox", "env": [{"name": "A=B"}]},
    )
    response = client.post(f"/api/v1/namespaces/{namespace}/pods", json=body)
    expect_invalid(
        response,
        "Pod",
        "p1",
        [
            (
                "FieldValueInvalid",
                "spec.containers[0].ports[0].containerPort",
                "Invalid value: 70000: must be between 1 and 65535, inclusive",
            ),
            (
                "FieldValueNotSupported",
                "spec.containers[0].ports[0].protocol",
                'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
            ),
            ("FieldValueRequired", "spec.containers[1].image", "Required value"),
            ("FieldValueDuplicate", "spec.containers[1].name", 'Duplicate value: "web"'),
            ("FieldValueInvalid", "spec.containers[2].name", f'Invalid value: "Side_Car": {LABEL_MSG}'),
            (
                "FieldValueInvalid",
                "spec.containers[2].env[0].name",
                'Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII '
                "characters other than '='",
            ),
        ],
    )
    assert client.get(f"/api/v1/namespaces/{namespace}/pods/p1").status_code == 404


def test_pod_volumes_resources_and_enums(client: httpx.Client, namespace: str) -> None:
    body = pod(
        "p2",
        {
            "name": "web",
            "image": "nginx",
            "volumeMounts": [{"name": "data", "mountPath": "/data"}, {"name": "cache", "mountPath": "/data"}],
            "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "500m"}},
        },
        volumes=[{"name": "cache", "emptyDir": {}}, {"name": "cache", "emptyDir": {}}],
        restartPolicy="Sometimes",
        dnsPolicy="Cluster",
    )
    body["metadata"]["labels"] = {"tier": "x" * 64}
    response = client.post(f"/api/v1/namespaces/{namespace}/pods", json=body)
    expect_invalid(
        response,
        "Pod",
        "p2",
        [
            (
                "FieldValueInvalid",
                "metadata.labels",
                f'Invalid value: "{"x" * 64}": must be no more than 63 characters',
            ),
            ("FieldValueDuplicate", "spec.volumes[1].name", 'Duplicate value: "cache"'),
            ("FieldValueNotFound", "spec.containers[0].volumeMounts[0].name", 'Not found: "data"'),
            (
                "FieldValueInvalid",
                "spec.containers[0].volumeMounts[1].mountPath",
                'Invalid value: "/data": must be unique',
            ),
            (
                "FieldValueInvalid",
                "spec.containers[0].resources.requests",
                'Invalid value: "2": must be less than or equal to cpu limit of 500m',
            ),
            (
                "FieldValueNotSupported",
                "spec.restartPolicy",
                'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
            ),
            (
                "FieldValueNotSupported",
                "spec.dnsPolicy",
                'Unsupported value: "Cluster": supported values: "ClusterFirstWithHostNet", "ClusterFirst", '
                '"Default", "None"',
            ),
        ],
    )


def test_pod_update_may_change_images_only(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    created = client.post(path, json=pod("p3", {"name": "web", "image": "nginx:1.26"}))
    assert created.status_code == 201, created.text
    current = created.json()
    current["spec"]["containers"][0]["image"] = "nginx:1.27"
    updated = client.put(f"{path}/p3", json=current)
    assert updated.status_code == 200, updated.text
    changed = updated.json()
    changed["spec"]["containers"][0]["command"] = ["sleep", "1d"]
    refused = client.put(f"{path}/p3", json=changed)
    assert refused.status_code == 422
    cause = refused.json()["details"]["causes"]
    assert [(c["reason"], c["field"]) for c in cause] == [("FieldValueForbidden", "spec")]
    assert cause[0]["message"].startswith(f"Forbidden: {POD_UPDATE_MSG}")
    assert refused.json()["message"].startswith(f'Pod "p3" is invalid: spec: Forbidden: {POD_UPDATE_MSG}')
    assert client.get(f"{path}/p3").json()["spec"]["containers"][0]["image"] == "nginx:1.27"


def test_service_ports_and_type(client: httpx.Client, namespace: str) -> None:
    body = {
        "metadata": {"name": "svc"},
        "spec": {"type": "Internal", "ports": [{"port": 80, "targetPort": 65536}, {"port": 70000, "protocol": "TCP"}]},
    }
    response = client.post(f"/api/v1/namespaces/{namespace}/services", json=body)
    expect_invalid(
        response,
        "Service",
        "svc",
        [
            ("FieldValueRequired", "spec.ports[0].name", "Required value"),
            (
                "FieldValueInvalid",
                "spec.ports[0].targetPort",
                "Invalid value: 65536: must be between 1 and 65535, inclusive",
            ),
            ("FieldValueRequired", "spec.ports[1].name", "Required value"),
            ("FieldValueInvalid", "spec.ports[1].port", "Invalid value: 70000: must be between 1 and 65535, inclusive"),
            (  # defaulted from the port before validation, as upstream defaults it
                "FieldValueInvalid",
                "spec.ports[1].targetPort",
                "Invalid value: 70000: must be between 1 and 65535, inclusive",
            ),
            (
                "FieldValueNotSupported",
                "spec.type",
                'Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", "LoadBalancer", '
                '"NodePort"',
            ),
        ],
    )
    empty = client.post(f"/api/v1/namespaces/{namespace}/services", json={"metadata": {"name": "none"}, "spec": {}})
    expect_invalid(empty, "Service", "none", [("FieldValueRequired", "spec.ports", "Required value")])


def test_service_cluster_ip_is_immutable(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/services"
    spec = {"clusterIP": "10.96.200.17", "clusterIPs": ["10.96.200.17"], "ports": [{"port": 80}]}
    created = client.post(path, json={"metadata": {"name": "fixed"}, "spec": spec})
    assert created.status_code == 201, created.text
    current = created.json()
    current["spec"]["clusterIP"] = "10.96.200.18"
    current["spec"]["clusterIPs"] = ["10.96.200.18"]
    response = client.put(f"{path}/fixed", json=current)
    cause = (
        "FieldValueInvalid",
        "spec.clusterIPs[0]",
        'Invalid value: []string{"10.96.200.18"}: may not change once set',
    )
    expect_invalid(response, "Service", "fixed", [cause])


def test_config_map_keys_size_and_immutability(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    bad = client.post(path, json={"metadata": {"name": "cm"}, "data": {"a key": "x", "..": "y"}})
    expect_invalid(
        bad,
        "ConfigMap",
        "cm",
        [
            ("FieldValueInvalid", "data[..]", "Invalid value: \"..\": must not be '..'"),
            ("FieldValueInvalid", "data[a key]", f'Invalid value: "a key": {CONFIG_KEY_MSG}'),
        ],
    )
    large = client.post(path, json={"metadata": {"name": "big"}, "data": {"a": "x" * (1024 * 1024 + 1)}})
    expect_invalid(
        large, "ConfigMap", "big", [("FieldValueTooLong", "[]", "Too long: may not be more than 1048576 bytes")]
    )
    created = client.post(path, json={"metadata": {"name": "frozen"}, "data": {"a": "1"}, "immutable": True})
    assert created.status_code == 201, created.text
    changed = created.json()
    changed["data"]["a"] = "2"
    changed["immutable"] = False
    response = client.put(f"{path}/frozen", json=changed)
    detail = "Forbidden: field is immutable when `immutable` is set"
    expect_invalid(
        response,
        "ConfigMap",
        "frozen",
        [("FieldValueForbidden", "immutable", detail), ("FieldValueForbidden", "data", detail)],
    )


def test_secret_type_and_required_keys(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/secrets"
    tls = client.post(path, json={"metadata": {"name": "tls"}, "type": "kubernetes.io/tls", "data": {}})
    expect_invalid(
        tls,
        "Secret",
        "tls",
        [
            ("FieldValueRequired", "data[tls.crt]", "Required value"),
            ("FieldValueRequired", "data[tls.key]", "Required value"),
        ],
    )
    created = client.post(path, json={"metadata": {"name": "plain"}, "type": "Opaque", "stringData": {"a": "b"}})
    assert created.status_code == 201, created.text
    changed = created.json()
    changed["type"] = "example.com/other"
    response = client.put(f"{path}/plain", json=changed)
    cause = ("FieldValueInvalid", "type", 'Invalid value: "example.com/other": field is immutable')
    expect_invalid(response, "Secret", "plain", [cause])


def test_namespace_name_is_a_dns_label(client: httpx.Client) -> None:
    response = client.post("/api/v1/namespaces", json={"metadata": {"name": "Team.A"}})
    expect_invalid(
        response,
        "Namespace",
        "Team.A",
        [("FieldValueInvalid", "metadata.name", f'Invalid value: "Team.A": {LABEL_MSG}')],
    )


def test_persistent_volume_claim(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims"
    response = client.post(path, json={"metadata": {"name": "claim"}, "spec": {"accessModes": ["ReadWriteSometimes"]}})
    expect_invalid(
        response,
        "PersistentVolumeClaim",
        "claim",
        [
            (
                "FieldValueNotSupported",
                "spec.accessModes",
                'Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", '
                '"ReadWriteOnce", "ReadWriteOncePod"',
            ),
            ("FieldValueRequired", "spec.resources[storage]", "Required value"),
        ],
    )
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    created = client.post(path, json={"metadata": {"name": "data"}, "spec": spec})
    assert created.status_code == 201, created.text
    changed = created.json()
    changed["spec"]["accessModes"] = ["ReadWriteMany"]
    refused = client.put(f"{path}/data", json=changed)
    assert refused.status_code == 422
    causes = refused.json()["details"]["causes"]
    assert [(c["reason"], c["field"]) for c in causes] == [("FieldValueForbidden", "spec")]
    detail = (
        "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
    )
    assert causes[0]["message"].startswith(f"Forbidden: {detail}")


def test_deployment_selector_template_and_counts(client: httpx.Client, namespace: str) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    body = deployment("web", replicas=-1, minReadySeconds=30, progressDeadlineSeconds=20)
    body["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    response = client.post(path, json=body)
    expect_invalid(
        response,
        "Deployment",
        "web",
        [
            ("FieldValueInvalid", "spec.replicas", "Invalid value: -1: must be greater than or equal to 0"),
            (
                "FieldValueInvalid",
                "spec.template.metadata.labels",
                'Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`',
            ),
            (
                "FieldValueInvalid",
                "spec.progressDeadlineSeconds",
                "Invalid value: 20: must be greater than minReadySeconds",
            ),
        ],
        group="apps",
    )
    created = client.post(path, json=deployment("web"))
    assert created.status_code == 201, created.text
    changed = created.json()
    changed["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "front"}}
    changed["spec"]["template"]["metadata"]["labels"] = {"app": "web", "tier": "front"}
    selector = (
        'v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"front"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
    )
    response = client.put(f"{path}/web", json=changed)
    expect_invalid(
        response,
        "Deployment",
        "web",
        [("FieldValueInvalid", "spec.selector", f"Invalid value: {selector}: field is immutable")],
        "apps",
    )


def test_stateful_set_updatable_fields(client: httpx.Client, namespace: str) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/statefulsets"
    spec = {"serviceName": "db", "selector": {"matchLabels": LABELS}, "template": template()}
    created = client.post(path, json={"metadata": {"name": "db"}, "spec": spec})
    assert created.status_code == 201, created.text
    current = created.json()
    current["spec"]["replicas"] = 3
    scaled = client.put(f"{path}/db", json=current)
    assert scaled.status_code == 200, scaled.text
    changed = scaled.json()
    changed["spec"]["serviceName"] = "other"
    detail = (
        "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
        "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    )
    expect_invalid(
        client.put(f"{path}/db", json=changed), "StatefulSet", "db", [("FieldValueForbidden", "spec", detail)], "apps"
    )


def test_job_and_cron_job(client: httpx.Client, namespace: str) -> None:
    jobs = f"/apis/batch/v1/namespaces/{namespace}/jobs"
    job = {
        "metadata": {"name": "once"},
        "spec": {"template": template(restartPolicy="Always"), "completionMode": "Random"},
    }
    expect_invalid(
        client.post(jobs, json=job),
        "Job",
        "once",
        [
            (
                "FieldValueNotSupported",
                "spec.completionMode",
                'Unsupported value: "Random": supported values: "NonIndexed", "Indexed"',
            ),
            (  # Always (what a template without one is defaulted to) is "required" a choice (make anchor-diff)
                "FieldValueRequired",
                "spec.template.spec.restartPolicy",
                'Required value: valid values: "OnFailure", "Never"',
            ),
        ],
        "batch",
    )
    cron_jobs = f"/apis/batch/v1/namespaces/{namespace}/cronjobs"
    name = "n" * 53
    body = {
        "metadata": {"name": name},
        "spec": {"schedule": "*/5 * * *", "jobTemplate": {"spec": {"template": template(restartPolicy="OnFailure")}}},
    }
    expect_invalid(
        client.post(cron_jobs, json=body),
        "CronJob",
        name,
        [
            (
                "FieldValueInvalid",
                "spec.schedule",
                'Invalid value: "*/5 * * *": expected exactly 5 fields, found 4: [*/5 * * *]',
            ),
            ("FieldValueInvalid", "metadata.name", f'Invalid value: "{name}": must be no more than 52 characters'),
        ],
        "batch",
    )
    body["metadata"]["name"] = "nightly"
    body["spec"]["schedule"] = "0 25 * * *"
    expect_invalid(
        client.post(cron_jobs, json=body),
        "CronJob",
        "nightly",
        [
            (
                "FieldValueInvalid",
                "spec.schedule",
                'Invalid value: "0 25 * * *": end of range (25) above maximum (23): 25',
            )
        ],
        "batch",
    )


def test_rbac_rules_and_role_refs(client: httpx.Client, namespace: str) -> None:
    group = "rbac.authorization.k8s.io"
    roles = f"/apis/{group}/v1/namespaces/{namespace}/roles"
    role = {
        "metadata": {"name": "reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"]}, {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
    }
    expect_invalid(
        client.post(roles, json=role),
        "Role",
        "reader",
        [
            ("FieldValueRequired", "rules[0].verbs", "Required value: verbs must contain at least one value"),
            (
                "FieldValueInvalid",
                "rules[1].nonResourceURLs",
                'Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs',
            ),
        ],
        group,
    )
    bindings = f"/apis/{group}/v1/namespaces/{namespace}/rolebindings"
    ref = {"apiGroup": group, "kind": "ClusterRole", "name": "view"}
    subjects = [{"kind": "Robot", "name": "r2"}]
    bad = client.post(
        bindings, json={"metadata": {"name": "b"}, "roleRef": {**ref, "kind": "Role2"}, "subjects": subjects}
    )
    expect_invalid(
        bad,
        "RoleBinding",
        "b",
        [
            (
                "FieldValueNotSupported",
                "roleRef.kind",
                'Unsupported value: "Role2": supported values: "Role", "ClusterRole"',
            ),
            (
                "FieldValueNotSupported",
                "subjects[0].kind",
                'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
            ),
        ],
        group,
    )
    created = client.post(bindings, json={"metadata": {"name": "b"}, "roleRef": ref})
    assert created.status_code == 201, created.text
    changed = created.json()
    changed["roleRef"]["name"] = "edit"
    shown = f'rbac.RoleRef{{APIGroup:"{group}", Kind:"ClusterRole", Name:"edit"}}'
    expect_invalid(
        client.put(f"{bindings}/b", json=changed),
        "RoleBinding",
        "b",
        [("FieldValueInvalid", "roleRef", f"Invalid value: {shown}: cannot change roleRef")],
        group,
    )


def test_pod_disruption_budget_and_priority_class(client: httpx.Client, namespace: str) -> None:
    budgets = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets"
    spec = {"minAvailable": 1, "maxUnavailable": "150%", "selector": {"matchLabels": LABELS}}
    expect_invalid(
        client.post(budgets, json={"metadata": {"name": "pdb"}, "spec": spec}),
        "PodDisruptionBudget",
        "pdb",
        [
            (
                "FieldValueInvalid",
                "spec",
                "Invalid value: policy.PodDisruptionBudgetSpec{...}: "
                "minAvailable and maxUnavailable cannot be both set",
            ),
            (
                "FieldValueInvalid",
                "spec.maxUnavailable",
                'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
            ),
        ],
        "policy",
    )
    classes = "/apis/scheduling.k8s.io/v1/priorityclasses"
    name = f"{namespace}-urgent"
    too_high = client.post(classes, json={"metadata": {"name": name}, "value": 2_000_000_000})
    cause = (
        "FieldValueForbidden",
        "value",
        "Forbidden: maximum allowed value of a user defined priority is 1000000000",
    )
    expect_invalid(too_high, "PriorityClass", name, [cause], "scheduling.k8s.io")
    created = client.post(classes, json={"metadata": {"name": name}, "value": 1000})
    assert created.status_code == 201, created.text
    changed = created.json()
    changed["value"] = 2000
    cause = ("FieldValueForbidden", "value", "Forbidden: may not be changed in an update.")
    expect_invalid(client.put(f"{classes}/{name}", json=changed), "PriorityClass", name, [cause], "scheduling.k8s.io")


def test_metadata_owner_references_finalizers_and_annotations(client: httpx.Client, namespace: str) -> None:
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "uid": "1", "controller": True}
    metadata = {
        "name": "owned",
        "ownerReferences": [{**owner, "name": "a"}, {**owner, "name": "b"}, {"apiVersion": "v1", "kind": "Pod"}],
        "finalizers": ["cleanup", "example.com/cleanup"],
        "annotations": {"big": "x" * (256 * 1024)},
    }
    response = client.post(f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": metadata})
    refs = ", ".join(
        f'v1.OwnerReference{{APIVersion:"{r["apiVersion"]}", Kind:"{r["kind"]}", Name:"{r.get("name", "")}", '
        f'UID:"{r.get("uid", "")}", Controller:(*bool)({"0xc000000000" if "controller" in r else "nil"}), '
        "BlockOwnerDeletion:(*bool)(nil)}"
        for r in metadata["ownerReferences"]
    )
    expect_invalid(
        response,
        "ConfigMap",
        "owned",
        [
            ("FieldValueTooLong", "metadata.annotations", "Too long: may not be more than 262144 bytes"),
            (
                "FieldValueInvalid",
                "metadata.ownerReferences",
                f"Invalid value: []v1.OwnerReference{{{refs}}}: Only one reference can have Controller set to true. "
                'Found "true" in references for ReplicaSet/a and ReplicaSet/b',
            ),
            ("FieldValueInvalid", "metadata.ownerReferences.name", 'Invalid value: "": name must not be empty'),
            ("FieldValueInvalid", "metadata.ownerReferences.uid", 'Invalid value: "": uid must not be empty'),
            (
                "FieldValueInvalid",
                "metadata.finalizers[0]",
                'Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
            ),
        ],
    )


@pytest.mark.parametrize("level", ["Ignore", "Warn", "Strict"])
def test_invalid_values_whatever_the_field_validation(client: httpx.Client, namespace: str, level: str) -> None:
    body = {"metadata": {"name": "cm", "labels": {"a": "-x-"}}}
    response = client.post(f"/api/v1/namespaces/{namespace}/configmaps", params={"fieldValidation": level}, json=body)
    expect_invalid(
        response,
        "ConfigMap",
        "cm",
        [("FieldValueInvalid", "metadata.labels", f'Invalid value: "-x-": {LABEL_VALUE_MSG}')],
    )


def test_unknown_field_and_invalid_value_report_the_invalid_value(client: httpx.Client, namespace: str) -> None:
    body = {"metadata": {"name": "cm", "labels": {"a": "-x-"}}, "datta": {"a": "b"}}
    response = client.post(f"/api/v1/namespaces/{namespace}/configmaps", params={"fieldValidation": "Warn"}, json=body)
    expect_invalid(
        response,
        "ConfigMap",
        "cm",
        [("FieldValueInvalid", "metadata.labels", f'Invalid value: "-x-": {LABEL_VALUE_MSG}')],
    )


def test_valid_objects_of_each_group_are_accepted(client: httpx.Client, namespace: str) -> None:
    """What the refused objects above would be when valid: all created."""
    objects = {
        f"/api/v1/namespaces/{namespace}/pods": pod(
            "ok",
            {
                "name": "web",
                "image": "nginx",
                "ports": [{"name": "http", "containerPort": 80}],
                "env": [{"name": "1_NOT_A_C_IDENTIFIER", "value": "x"}],
                "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
                "resources": {"requests": {"cpu": "250m"}, "limits": {"cpu": "1"}},
                "livenessProbe": {"httpGet": {"path": "/", "port": "http"}},
            },
            volumes=[{"name": "cache", "emptyDir": {}}],
            restartPolicy="OnFailure",
        ),
        f"/api/v1/namespaces/{namespace}/services": {
            "metadata": {"name": "ok"},
            "spec": {
                "selector": LABELS,
                "ports": [{"name": "http", "port": 80, "targetPort": "http"}, {"name": "m", "port": 9090}],
            },
        },
        f"/apis/apps/v1/namespaces/{namespace}/deployments": deployment("ok", replicas=0),
        f"/apis/apps/v1/namespaces/{namespace}/daemonsets": {
            "metadata": {"name": "ok"},
            "spec": {"selector": {"matchLabels": LABELS}, "template": template()},
        },
        f"/apis/batch/v1/namespaces/{namespace}/cronjobs": {
            "metadata": {"name": "ok"},
            "spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": template(restartPolicy="Never")}}},
        },
        f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets": {
            "metadata": {"name": "ok"},
            "spec": {"maxUnavailable": "25%", "selector": {"matchLabels": LABELS}},
        },
    }
    for path, body in objects.items():
        response = client.post(path, json=body)
        assert response.status_code == 201, (path, response.text)


def test_persistent_volume(client: httpx.Client) -> None:
    response = client.post("/api/v1/persistentvolumes", json={"metadata": {"name": "pv-empty"}, "spec": {}})
    expect_invalid(
        response,
        "PersistentVolume",
        "pv-empty",
        [
            ("FieldValueRequired", "spec.accessModes", "Required value"),
            ("FieldValueRequired", "spec.capacity", "Required value"),
            (
                "FieldValueNotSupported",
                "spec.capacity",
                'Unsupported value: core.ResourceList(nil): supported values: "storage"',
            ),
            ("FieldValueRequired", "spec", "Required value: must specify a volume type"),
        ],
    )


def test_network_policy_and_ingress(client: httpx.Client, namespace: str) -> None:
    group = "networking.k8s.io"
    policies = f"/apis/{group}/v1/namespaces/{namespace}/networkpolicies"
    spec = {
        "podSelector": {},
        "ingress": [{"ports": [{"port": 70000}], "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/33"}}]}],
        "policyTypes": ["Both"],
    }
    expect_invalid(
        client.post(policies, json={"metadata": {"name": "np"}, "spec": spec}),
        "NetworkPolicy",
        "np",
        [
            (
                "FieldValueInvalid",
                "spec.ingress[0].ports[0].port",
                "Invalid value: 70000: must be between 1 and 65535, inclusive",
            ),
            ("FieldValueRequired", "spec.ingress[0].from[0]", "Required value: must specify a peer"),
            (
                "FieldValueInvalid",
                "spec.ingress[0].from[1].ipBlock.cidr",
                'Invalid value: "10.0.0.0/33": not a valid CIDR',
            ),
            (
                "FieldValueNotSupported",
                "spec.policyTypes[0]",
                'Unsupported value: "Both": supported values: "Ingress", "Egress"',
            ),
        ],
        group,
    )
    ingresses = f"/apis/{group}/v1/namespaces/{namespace}/ingresses"
    expect_invalid(
        client.post(ingresses, json={"metadata": {"name": "empty"}, "spec": {}}),
        "Ingress",
        "empty",
        [
            (
                "FieldValueInvalid",
                "spec",
                "Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified",
            )
        ],
        group,
    )
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    rules = [{"host": "10.0.0.1", "http": {"paths": [{"path": "/", "backend": backend}]}}]
    expect_invalid(
        client.post(ingresses, json={"metadata": {"name": "ip"}, "spec": {"rules": rules}}),
        "Ingress",
        "ip",
        [
            (
                "FieldValueInvalid",
                "spec.rules[0].host",
                'Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
            ),
            (
                "FieldValueRequired",
                "spec.rules[0].http.paths[0].pathType",
                "Required value: pathType must be specified",
            ),
        ],
        group,
    )


def test_storage_class_and_endpoint_slice(client: httpx.Client, namespace: str) -> None:
    classes = "/apis/storage.k8s.io/v1/storageclasses"
    name = f"{namespace}-fast"
    expect_invalid(
        client.post(classes, json={"metadata": {"name": name}}),
        "StorageClass",
        name,
        [("FieldValueRequired", "provisioner", "Required value")],
        "storage.k8s.io",
    )
    created = client.post(classes, json={"metadata": {"name": name}, "provisioner": "example.com/disk"})
    assert created.status_code == 201, created.text
    changed = created.json()
    changed["parameters"] = {"type": "ssd"}
    expect_invalid(
        client.put(f"{classes}/{name}", json=changed),
        "StorageClass",
        name,
        [("FieldValueForbidden", "parameters", "Forbidden: updates to parameters are forbidden.")],
        "storage.k8s.io",
    )
    slices = f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices"
    expect_invalid(
        client.post(slices, json={"metadata": {"name": "s5"}, "addressType": "IPv5"}),
        "EndpointSlice",
        "s5",
        [
            (
                "FieldValueNotSupported",
                "addressType",
                'Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"',
            )
        ],
        "discovery.k8s.io",
    )
    body = {"metadata": {"name": "s4"}, "addressType": "IPv4", "endpoints": [{"addresses": ["127.0.0.1", "::1"]}]}
    expect_invalid(
        client.post(slices, json=body),
        "EndpointSlice",
        "s4",
        [
            (
                "FieldValueInvalid",
                "endpoints[0].addresses[0]",
                'Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
            ),
            ("FieldValueInvalid", "endpoints[0].addresses[1]", 'Invalid value: "::1": must be a valid IPv4 address'),
        ],
        "discovery.k8s.io",
    )


def test_certificate_signing_request(client: httpx.Client, namespace: str) -> None:
    name = f"{namespace}-csr"
    spec = {"request": "eA==", "signerName": "example", "usages": ["client auth", "client auth", "flying"]}
    expect_invalid(
        client.post(
            "/apis/certificates.k8s.io/v1/certificatesigningrequests", json={"metadata": {"name": name}, "spec": spec}
        ),
        "CertificateSigningRequest",
        name,
        [
            (
                "FieldValueInvalid",
                "spec.request",
                "Invalid value: []byte{0x78}: PEM block type must be CERTIFICATE REQUEST",
            ),
            (
                "FieldValueNotSupported",
                "spec.usages[2]",
                'Unsupported value: "flying": supported values: "any", "cert sign", "client auth", "code signing", '
                '"content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", '
                '"email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", '
                '"key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", '
                '"server auth", "signing", "timestamping"',
            ),
            ("FieldValueDuplicate", "spec.usages[1]", 'Duplicate value: "client auth"'),
            (
                "FieldValueInvalid",
                "spec.signerName",
                'Invalid value: "example": must be a fully qualified domain and path of the form '
                "'example.com/signer-name'",
            ),
        ],
        "certificates.k8s.io",
    )


def test_autoscaler_webhooks_lease_and_runtime_class(client: httpx.Client, namespace: str) -> None:
    hpas = f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers"
    spec = {"minReplicas": 2, "maxReplicas": 0, "scaleTargetRef": {"apiVersion": "apps/v1", "name": "web"}}
    expect_invalid(
        client.post(hpas, json={"metadata": {"name": "hpa"}, "spec": spec}),
        "HorizontalPodAutoscaler",
        "hpa",
        [
            ("FieldValueInvalid", "spec.maxReplicas", "Invalid value: 0: must be greater than 0"),
            (
                "FieldValueInvalid",
                "spec.maxReplicas",
                "Invalid value: 0: must be greater than or equal to `minReplicas`",
            ),
            ("FieldValueRequired", "spec.scaleTargetRef.kind", "Required value"),
        ],
        "autoscaling",
    )
    group = "admissionregistration.k8s.io"
    name = f"{namespace}-hooks"
    hook = {"name": "hook", "clientConfig": {"url": "http://example.com/check"}}
    expect_invalid(
        client.post(
            f"/apis/{group}/v1/validatingwebhookconfigurations", json={"metadata": {"name": name}, "webhooks": [hook]}
        ),
        "ValidatingWebhookConfiguration",
        name,
        [
            (
                "FieldValueInvalid",
                "webhooks[0].name",
                'Invalid value: "hook": should be a domain with at least three segments separated by dots',
            ),
            ("FieldValueRequired", "webhooks[0].sideEffects", "Required value: must specify one of None, NoneOnDryRun"),
            (
                "FieldValueInvalid",
                "webhooks[0].clientConfig.url",
                "Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
            ),
            (
                "FieldValueRequired",
                "webhooks[0].admissionReviewVersions",
                "Required value: must specify one of v1, v1beta1",
            ),
        ],
        group,
    )
    leases = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
    expect_invalid(
        client.post(leases, json={"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0}}),
        "Lease",
        "l",
        [("FieldValueInvalid", "spec.leaseDurationSeconds", "Invalid value: 0: must be greater than 0")],
        "coordination.k8s.io",
    )
    name = f"{namespace}-rc"
    expect_invalid(
        client.post("/apis/node.k8s.io/v1/runtimeclasses", json={"metadata": {"name": name}, "handler": "Run_C"}),
        "RuntimeClass",
        name,
        [("FieldValueInvalid", "handler", f'Invalid value: "Run_C": {LABEL_MSG}')],
        "node.k8s.io",
    )
