"""The field manager on real kinds: ownership transitions through create, update, status updates and
server-side apply, with managedFields compared to what kube-apiserver writes (the Server-Side Apply
documentation, real clusters' objects, apimachinery's fieldmanager_test.go and internal tests)."""

from __future__ import annotations

import copy
import json

import pytest

from protokube.gateway.errors import StatusError
from protokube.gateway.fieldmanager.equality import ignore_managed_fields_timestamps
from protokube.gateway.fieldmanager.fieldpath import Set, make_path
from protokube.gateway.fieldmanager.lastapplied import ANNOTATION
from protokube.gateway.fieldmanager.manager import ANCIENT_CHANGES, FieldManager, Unchanged
from protokube.schema.typetree import proto_type

from .test_fieldpath import APPLIED_DEPLOYMENT, CONTROLLER_DEPLOYMENT_STATUS, KUBECTL_CREATE_DEPLOYMENT

T0, T1, T2, T3, T4 = (f"2024-01-01T00:00:0{i}Z" for i in range(5))

CONFIGMAP = FieldManager(proto_type("k8s.io.api.core.v1.ConfigMap"), "v1")
DEPLOYMENT = FieldManager(
    proto_type("k8s.io.api.apps.v1.Deployment"),
    "apps/v1",
    reset_fields={  # the registry strategies' GetResetFields for deployments and deployments/status
        "": Set.of(make_path("status")),
        "status": Set.of(make_path("spec"), make_path("metadata", "labels")),
    },
)
POD = FieldManager(proto_type("k8s.io.api.core.v1.Pod"), "v1", reset_fields={"": Set.of(make_path("status"))})


def fields(obj, manager, operation=None, subresource=None):
    """The fieldsV1 of one entry, as compact JSON text."""
    for entry in obj["metadata"].get("managedFields", []):
        if (
            entry["manager"] == manager
            and operation in (None, entry["operation"])
            and subresource in (None, entry.get("subresource"))
        ):
            return json.dumps(entry["fieldsV1"], separators=(",", ":"))
    raise AssertionError(f"no entry for {manager}: {obj['metadata'].get('managedFields')}")


def managers(obj):
    return [
        (e["manager"], e["operation"], e.get("subresource", ""), e.get("time"))
        for e in obj["metadata"].get("managedFields", [])
    ]


def stored(obj, uid="uid-1"):
    """What the store keeps after a create: identity metadata filled in."""
    obj = copy.deepcopy(obj)
    obj["metadata"].setdefault("uid", uid)
    obj["metadata"]["creationTimestamp"] = obj["metadata"].get("creationTimestamp") or T0
    return obj


def configmap(data=None, labels=None, **metadata):
    obj = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "cm", "namespace": "default", **metadata}}
    if labels is not None:
        obj["metadata"]["labels"] = labels
    if data is not None:
        obj["data"] = data
    return obj


def conflict(call):
    with pytest.raises(StatusError) as e:
        call()
    status = e.value.status
    assert (status.code, status.reason, status.status) == (409, "Conflict", "Failure")
    return status.message, [(c.reason, c.message, c.field) for c in status.details.causes]


# --- creating and updating with Update -------------------------------------------------------------

# `kubectl create deployment nginx --image=nginx` as the apiserver holds it after decoding and defaulting.
NGINX = json.loads(
    '{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"nginx","namespace":"default",'
    '"creationTimestamp":null,"labels":{"app":"nginx"}},"spec":{"replicas":1,"selector":{"matchLabels":'
    '{"app":"nginx"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"nginx"}},"spec":'
    '{"containers":[{"name":"nginx","image":"nginx","resources":{},"terminationMessagePath":"/dev/termination-log",'
    '"terminationMessagePolicy":"File","imagePullPolicy":"Always"}],"restartPolicy":"Always",'
    '"terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":'
    '"default-scheduler"}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%",'
    '"maxSurge":"25%"}},"revisionHistoryLimit":10,"progressDeadlineSeconds":600},"status":{}}'
)
NGINX_STATUS = json.loads(
    '{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,'
    '"conditions":[{"type":"Available","status":"True","lastUpdateTime":"2022-01-23T14:12:04Z",'
    '"lastTransitionTime":"2022-01-23T14:12:04Z","reason":"MinimumReplicasAvailable","message":'
    '"Deployment has minimum availability."},{"type":"Progressing","status":"True","lastUpdateTime":'
    '"2022-01-23T14:12:04Z","lastTransitionTime":"2022-01-23T14:11:53Z","reason":"NewReplicaSetAvailable",'
    '"message":"ReplicaSet \\"nginx-6799fc88d8\\" has successfully progressed."}]}'
)


def test_create_records_the_creator_as_kube_apiserver_does():
    created = DEPLOYMENT.update(None, NGINX, "kubectl-create", now="2022-01-23T14:11:53Z")
    assert created["metadata"]["managedFields"] == [
        {
            "manager": "kubectl-create",
            "operation": "Update",
            "apiVersion": "apps/v1",
            "time": "2022-01-23T14:11:53Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": json.loads(KUBECTL_CREATE_DEPLOYMENT),
        }
    ]
    assert fields(created, "kubectl-create") == KUBECTL_CREATE_DEPLOYMENT
    assert "managedFields" not in NGINX["metadata"]  # inputs are not mutated


def test_status_update_by_the_controller_is_a_status_entry():
    live = stored(DEPLOYMENT.update(None, NGINX, "kubectl-create", now="2022-01-23T14:11:53Z"))
    new = copy.deepcopy(live)
    new["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "1"}
    new["status"] = NGINX_STATUS
    updated = DEPLOYMENT.update(live, new, "kube-controller-manager", "status", now="2022-01-23T14:12:04Z")
    assert managers(updated) == [
        ("kubectl-create", "Update", "", "2022-01-23T14:11:53Z"),
        ("kube-controller-manager", "Update", "status", "2022-01-23T14:12:04Z"),
    ]
    assert fields(updated, "kube-controller-manager") == CONTROLLER_DEPLOYMENT_STATUS
    # The whole list, byte for byte as a 1.2x kube-apiserver serves it.
    assert json.dumps(updated["metadata"]["managedFields"], separators=(",", ":")) == (
        '[{"manager":"kubectl-create","operation":"Update","apiVersion":"apps/v1","time":"2022-01-23T14:11:53Z",'
        f'"fieldsType":"FieldsV1","fieldsV1":{KUBECTL_CREATE_DEPLOYMENT}}},'
        '{"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1",'
        f'"time":"2022-01-23T14:12:04Z","fieldsType":"FieldsV1","fieldsV1":{CONTROLLER_DEPLOYMENT_STATUS},'
        '"subresource":"status"}]'
    )


def test_status_writes_ignore_managed_fields_sent_by_the_client():
    live = stored(DEPLOYMENT.update(None, NGINX, "kubectl-create", now=T0))
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = [
        {
            "manager": "forged",
            "operation": "Apply",
            "apiVersion": "apps/v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {}},
        }
    ]
    new["status"] = {"replicas": 1}
    updated = DEPLOYMENT.update(live, new, "kcm", "status", now=T1)
    assert [m[0] for m in managers(updated)] == ["kubectl-create", "kcm"]


def test_a_second_manager_takes_the_fields_it_changes():
    live = stored(CONFIGMAP.update(None, configmap({"a": "1", "b": "2"}), "creator", now=T0))
    new = configmap({"a": "1", "b": "changed"})
    new["metadata"].update(uid="uid-1", creationTimestamp=T0, managedFields=live["metadata"]["managedFields"])
    updated = CONFIGMAP.update(live, new, "editor", now=T1)
    assert fields(updated, "creator") == '{"f:data":{".":{},"f:a":{}}}'
    assert fields(updated, "editor") == '{"f:data":{"f:b":{}}}'
    assert managers(updated) == [("creator", "Update", "", T0), ("editor", "Update", "", T1)]


def test_update_entries_of_one_manager_merge_and_time_moves_only_on_change():
    live = stored(CONFIGMAP.update(None, configmap({"a": "1"}), "m", now=T0))
    new = copy.deepcopy(live)
    new["data"]["b"] = "2"
    updated = CONFIGMAP.update(live, new, "m", now=T1)
    assert managers(updated) == [("m", "Update", "", T1)]
    assert fields(updated, "m") == '{"f:data":{".":{},"f:a":{},"f:b":{}}}'
    # A write that changes nothing leaves the entry, its time included, as it was.
    again = CONFIGMAP.update(updated, copy.deepcopy(updated), "m", now=T2)
    assert again["metadata"]["managedFields"] == updated["metadata"]["managedFields"]
    # Another manager writing the same values takes nothing.
    other = CONFIGMAP.update(updated, copy.deepcopy(updated), "other", now=T3)
    assert managers(other) == [("m", "Update", "", T1)]


def test_removed_fields_leave_every_manager():
    live = stored(CONFIGMAP.update(None, configmap({"a": "1", "b": "2"}), "creator", now=T0))
    new = copy.deepcopy(live)
    del new["data"]["b"]
    updated = CONFIGMAP.update(live, new, "editor", now=T1)
    assert fields(updated, "creator") == '{"f:data":{".":{},"f:a":{}}}'
    assert managers(updated) == [("creator", "Update", "", T0)]  # the editor added nothing


def test_manager_names_update_entries_per_api_version_and_unknown_for_empty():
    created = CONFIGMAP.update(None, configmap({"a": "1"}), "", now=T0)
    assert managers(created) == [("unknown", "Update", "", T0)]


def test_update_entries_are_capped_into_ancient_changes():
    # capManagersManager: at most 10 Update entries; the oldest merge into "ancient-changes".
    live = stored(CONFIGMAP.update(None, configmap({"k0": "v"}), "m0", now="2024-01-01T00:00:00Z"))
    for i in range(1, 12):
        new = copy.deepcopy(live)
        new["data"][f"k{i}"] = "v"
        live = CONFIGMAP.update(live, new, f"m{i}", now=f"2024-01-01T00:00:{i:02d}Z")
    names = [m[0] for m in managers(live)]
    assert len(names) == 10
    assert names[0] == ANCIENT_CHANGES
    assert names[1:] == [f"m{i}" for i in range(3, 12)]
    assert fields(live, ANCIENT_CHANGES) == '{"f:data":{".":{},"f:k0":{},"f:k1":{},"f:k2":{}}}'
    assert managers(live)[0][3] == "2024-01-01T00:00:02Z"  # the time of the newest merged entry


def test_cap_update_managers_table():  # TestCapUpdateManagers "two versions, no ancient changes"
    fm = FieldManager(proto_type("k8s.io.api.core.v1.ConfigMap"), "v1", max_update_managers=3)

    def entry(name, version, hour, *fs):
        return {
            "manager": name,
            "operation": "Update",
            "apiVersion": version,
            "time": f"0001-01-01T{hour:02d}:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {f"f:{f}": {} for f in fs},
        }

    live = stored(configmap())
    live["metadata"]["managedFields"] = [
        entry("update-manager1", "v1", 1, "a"),
        entry("update-manager2", "v2", 2, "b"),
        entry("update-manager3", "v1", 3, "c"),
        entry("update-manager4", "v1", 4, "d"),
        entry("update-manager5", "v1", 5, "e"),
    ]
    out = fm.update(live, copy.deepcopy(live), "no-op-update", now=T0)
    assert out["metadata"]["managedFields"] == [
        entry("update-manager2", "v2", 2, "b"),
        entry(ANCIENT_CHANGES, "v1", 4, "a", "c", "d"),
        entry("update-manager5", "v1", 5, "e"),
    ]


# --- managedFields sent by clients ------------------------------------------------------------------


def test_valid_client_managed_fields_are_kept_and_reencoded():
    live = stored(CONFIGMAP.update(None, configmap({"a": "1"}), "creator", now=T0))
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = [
        {
            "manager": "renamed",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2024-01-01T01:00:00+01:00",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:a": {}, ".": {}}},
        },
    ]
    out = CONFIGMAP.update(live, new, "writer", now=T1)
    assert out["metadata"]["managedFields"] == [
        {
            "manager": "renamed",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2024-01-01T00:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:a": {}}},
        },
    ]
    assert list(out["metadata"]["managedFields"][0]["fieldsV1"]["f:data"]) == [".", "f:a"]


@pytest.mark.parametrize(
    "invalid",
    [
        [{"manager": "x", "operation": "Bogus", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {}}],
        [{"manager": "x", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {}}],
        [{"manager": "x", "operation": "Update", "apiVersion": "v1", "fieldsV1": {}}],
        [{"manager": "x", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:a": 1}}],
        [{}, {}],
    ],
)
def test_invalid_client_managed_fields_fall_back_to_the_live_ones(invalid):
    live = stored(CONFIGMAP.update(None, configmap({"a": "1"}), "creator", now=T0))
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = invalid
    out = CONFIGMAP.update(live, new, "writer", now=T1)
    assert out["metadata"]["managedFields"] == live["metadata"]["managedFields"]


@pytest.mark.parametrize("reset", [[{}], []])
def test_empty_managed_fields_clear_them_and_the_object_stays_untracked(reset):
    # TestResetManagedFieldsEmptyItem / EmptyList; the documentation's "Clearing managedFields".
    live = stored(CONFIGMAP.update(None, configmap({"a": "1"}), "creator", now=T0))
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = reset
    new["data"]["b"] = "2"
    out = CONFIGMAP.update(live, new, "writer", now=T1)
    assert "managedFields" not in out["metadata"]
    # skipNonApplied: updates of an untracked object keep it untracked.
    again = copy.deepcopy(out)
    again["data"]["c"] = "3"
    assert "managedFields" not in CONFIGMAP.update(out, again, "writer", now=T2)["metadata"]


def test_an_update_that_cannot_be_typed_is_written_without_managed_fields():
    # UpdateNoErrors: a list-map item without its key cannot be tracked.
    live = stored(
        POD.update(
            None,
            {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}},
            "m",
            now=T0,
        )
    )
    new = copy.deepcopy(live)
    new["spec"]["containers"].append({"image": "no-name"})
    out = POD.update(live, new, "m", now=T1)
    assert "managedFields" not in out["metadata"]


# --- server-side apply ----------------------------------------------------------------------------

APPLIED = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "nginx-deployment", "namespace": "default", "labels": {"app": "nginx"}},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "nginx"}},
        "template": {
            "metadata": {"labels": {"app": "nginx"}},
            "spec": {
                "containers": [
                    {
                        "name": "nginx",
                        "image": "nginx:1.14.2",
                        "env": [{"name": "MY_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                        "ports": [{"containerPort": 80}],
                    }
                ]
            },
        },
    },
}


def test_apply_creates_and_records_exactly_the_applied_fields():
    created = DEPLOYMENT.apply(None, APPLIED, "provider-kubernetes/sample-deployment-owner", now="2024-09-03T14:09:23Z")
    assert created["metadata"]["managedFields"] == [
        {
            "manager": "provider-kubernetes/sample-deployment-owner",
            "operation": "Apply",
            "apiVersion": "apps/v1",
            "time": "2024-09-03T14:09:23Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": json.loads(APPLIED_DEPLOYMENT),
        }
    ]
    assert created["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80}]
    assert created["metadata"]["labels"] == {"app": "nginx"}


def test_documentation_configmap_example():
    # Server-Side Apply docs: a ConfigMap applied by kubectl, then changed by an update.
    applied = configmap({"key": "some value"}, {"test-label": "test"}, name="test-cm")
    created = stored(CONFIGMAP.apply(None, applied, "kubectl", now=T0))
    assert fields(created, "kubectl") == '{"f:data":{"f:key":{}},"f:metadata":{"f:labels":{"f:test-label":{}}}}'
    new = copy.deepcopy(created)
    new["data"]["key"] = "new value"
    updated = CONFIGMAP.update(created, new, "kube-controller-manager", now=T1)
    assert fields(updated, "kubectl") == '{"f:metadata":{"f:labels":{"f:test-label":{}}}}'
    assert fields(updated, "kube-controller-manager") == '{"f:data":{"f:key":{}}}'
    # "If this update has instead been attempted using Server-Side Apply, the request would have failed."
    message, causes = conflict(lambda: CONFIGMAP.apply(updated, applied, "kubectl", now=T2))
    assert message == 'Apply failed with 1 conflict: conflict with "kube-controller-manager" using v1: .data.key'
    assert causes == [("FieldManagerConflict", 'conflict with "kube-controller-manager" using v1', ".data.key")]


def test_conflict_then_force_then_shared_ownership():
    live = stored(CONFIGMAP.apply(None, configmap({"shared": "a", "own": "x"}), "mgr", now=T0))
    # A second applier setting the same field to another value conflicts with the Apply owner.
    message, causes = conflict(lambda: CONFIGMAP.apply(live, configmap({"shared": "b"}), "other", now=T1))
    assert message == 'Apply failed with 1 conflict: conflict with "mgr": .data.shared'
    assert causes == [("FieldManagerConflict", 'conflict with "mgr"', ".data.shared")]
    # force takes the field over.
    forced = CONFIGMAP.apply(live, configmap({"shared": "b"}), "other", force=True, now=T1)
    assert forced["data"] == {"shared": "b", "own": "x"}
    assert fields(forced, "mgr") == '{"f:data":{"f:own":{}}}'
    assert fields(forced, "other") == '{"f:data":{"f:shared":{}}}'
    # Applying the live value shares the field: no conflict, both own it.
    shared = stored(CONFIGMAP.apply(forced, configmap({"shared": "b", "own": "x"}), "mgr", now=T2))
    assert fields(shared, "mgr") == '{"f:data":{"f:own":{},"f:shared":{}}}'
    assert fields(shared, "other") == '{"f:data":{"f:shared":{}}}'
    # Now any change of the shared field by either conflicts with the other.
    message, _ = conflict(lambda: CONFIGMAP.apply(shared, configmap({"shared": "c"}), "other", now=T3))
    assert message == 'Apply failed with 1 conflict: conflict with "mgr": .data.shared'


def test_several_conflicts_message():
    live = stored(CONFIGMAP.apply(None, configmap({"a": "1", "b": "2"}, {"l": "x"}), "one", now=T0))
    new = copy.deepcopy(live)
    new["data"]["c"] = "3"
    live = CONFIGMAP.update(live, new, "two", now=T1)
    message, causes = conflict(
        lambda: CONFIGMAP.apply(live, configmap({"a": "9", "b": "9", "c": "9"}), "three", now=T2)
    )
    assert message == (
        'Apply failed with 3 conflicts: conflicts with "one":\n- .data.a\n- .data.b\n'
        'conflicts with "two" using v1:\n- .data.c'
    )
    assert [c[2] for c in causes] == [".data.a", ".data.b", ".data.c"]


def test_conflict_with_a_status_subresource_owner():
    live = stored(DEPLOYMENT.update(None, NGINX, "kubectl-create", now=T0))
    new = copy.deepcopy(live)
    new["status"] = {"replicas": 1}
    live = DEPLOYMENT.update(live, new, "kube-controller-manager", "status", now=T1)
    applied = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx"}, "status": {"replicas": 5}}
    message, causes = conflict(lambda: DEPLOYMENT.apply(live, applied, "status-writer", subresource="status", now=T2))
    assert message == (
        'Apply failed with 1 conflict: conflict with "kube-controller-manager" with subresource "status" '
        "using apps/v1: .status.replicas"
    )
    assert causes[0][1] == 'conflict with "kube-controller-manager" with subresource "status" using apps/v1'
    out = DEPLOYMENT.apply(live, applied, "status-writer", force=True, subresource="status", now=T2)
    entry = next(e for e in out["metadata"]["managedFields"] if e["manager"] == "status-writer")
    assert (entry["operation"], entry["subresource"]) == ("Apply", "status")


def test_apply_through_the_main_resource_never_owns_status():
    applied = {**copy.deepcopy(APPLIED), "status": {"replicas": 3}}
    created = DEPLOYMENT.apply(None, applied, "kubectl", now=T0)
    assert '"f:status"' not in fields(created, "kubectl")


def test_dropping_a_field_from_the_applied_configuration_removes_it_unless_shared():
    live = stored(CONFIGMAP.apply(None, configmap({"a": "1", "b": "2", "c": "3"}), "one", now=T0))
    live = stored(CONFIGMAP.apply(live, configmap({"c": "3"}), "two", now=T1))
    new = copy.deepcopy(live)
    new["data"]["b"] = "changed"
    live = CONFIGMAP.update(live, new, "editor", now=T2)  # the updater now owns b
    out = CONFIGMAP.apply(live, configmap(), "one", now=T3)
    # a: only "one" owned it: removed. b: taken over by an updater: kept. c: shared with "two": kept.
    assert out["data"] == {"b": "changed", "c": "3"}
    assert [m[0] for m in managers(out)] == ["two", "editor"]


def test_reapplying_the_same_configuration_is_unchanged():
    # TestNoOpChanges: no new resourceVersion, no new time.
    live = stored(CONFIGMAP.apply(None, configmap({"a": "1"}, {"x": "y"}), "m", now=T0))
    result = CONFIGMAP.apply(live, configmap({"a": "1"}, {"x": "y"}), "m", now=T1)
    assert isinstance(result, Unchanged)
    assert result.object is live
    # A new applier of the same values changes managedFields only, without a time (nothing changed),
    # and an entry without time sorts first.
    other = CONFIGMAP.apply(live, configmap({"a": "1"}), "other", now=T2)
    assert not isinstance(other, Unchanged)
    assert other["data"] == live["data"]
    assert managers(other) == [("other", "Apply", "", None), ("m", "Apply", "", T0)]


def test_apply_of_just_the_kind_changes_nothing():
    live = stored(CONFIGMAP.apply(None, configmap({"a": "1"}), "m", now=T0))
    assert isinstance(CONFIGMAP.apply(live, {"apiVersion": "v1", "kind": "ConfigMap"}, "other", now=T1), Unchanged)


def test_applier_time_changes_with_the_object():
    live = stored(CONFIGMAP.apply(None, configmap({"a": "1"}), "m", now=T0))
    out = CONFIGMAP.apply(live, configmap({"a": "2"}), "m", now=T1)
    assert managers(out) == [("m", "Apply", "", T1)]


# --- list and map semantics on real kinds ------------------------------------------------------------


def pod(containers=None, **spec):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": containers or [], **spec},
    }


def test_containers_are_merged_by_name():
    live = stored(POD.apply(None, pod([{"name": "app", "image": "a:1"}]), "one", now=T0))
    live = stored(POD.apply(live, pod([{"name": "sidecar", "image": "s:1"}]), "two", now=T1))
    assert [c["name"] for c in live["spec"]["containers"]] == ["app", "sidecar"]
    assert (
        fields(live, "two")
        == '{"f:spec":{"f:containers":{"k:{\\"name\\":\\"sidecar\\"}":{".":{},"f:image":{},"f:name":{}}}}}'
    )
    # "one" drops its container: removed; "two"'s stays.
    out = POD.apply(live, pod([]), "one", now=T2)
    assert [c["name"] for c in out["spec"]["containers"]] == ["sidecar"]
    # Changing another manager's container image conflicts on that field only.
    message, _ = conflict(lambda: POD.apply(live, pod([{"name": "sidecar", "image": "s:2"}]), "one", now=T2))
    assert message == 'Apply failed with 1 conflict: conflict with "two": .spec.containers[name="sidecar"].image'


def test_ports_are_keyed_by_container_port_and_protocol():
    ports = [{"containerPort": 53, "protocol": "UDP"}, {"containerPort": 53}]
    live = stored(POD.apply(None, pod([{"name": "dns", "image": "d", "ports": ports}]), "one", now=T0))
    owned = fields(live, "one")
    assert '"k:{\\"containerPort\\":53,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{}}' in owned
    assert (
        '"k:{\\"containerPort\\":53,\\"protocol\\":\\"UDP\\"}":{".":{},"f:containerPort":{},"f:protocol":{}}' in owned
    )
    # Another applier's port with the same number and another protocol is another item.
    sctp = [{"containerPort": 53, "protocol": "SCTP", "name": "x"}]
    out = stored(POD.apply(live, pod([{"name": "dns", "ports": sctp}]), "two", now=T1))
    assert [(p["containerPort"], p.get("protocol")) for p in out["spec"]["containers"][0]["ports"]] == [
        (53, "UDP"),
        (53, None),
        (53, "SCTP"),
    ]


def test_finalizers_are_a_set():
    live = stored(
        POD.apply(
            None,
            {**pod([{"name": "c", "image": "i"}]), "metadata": {"name": "p", "finalizers": ["a/x"]}},
            "one",
            now=T0,
        )
    )
    live = stored(
        POD.apply(
            live, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "finalizers": ["b/y"]}}, "two", now=T1
        )
    )
    assert live["metadata"]["finalizers"] == ["a/x", "b/y"]
    assert fields(live, "two") == '{"f:metadata":{"f:finalizers":{"v:\\"b/y\\"":{}}}}'
    out = POD.apply(live, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}, "two", now=T2)
    assert out["metadata"]["finalizers"] == ["a/x"]


def test_atomic_lists_structs_and_maps_are_owned_whole():
    live = stored(
        POD.apply(
            None,
            pod(
                [{"name": "c", "image": "i", "args": ["a", "b"]}],
                nodeSelector={"disk": "ssd"},
                tolerations=[{"key": "k", "operator": "Exists"}],
            ),
            "one",
            now=T0,
        )
    )
    owned = fields(live, "one")
    assert '"f:args":{}' in owned and '"f:nodeSelector":{}' in owned and '"f:tolerations":{}' in owned
    for change, path in [
        (pod([{"name": "c", "args": ["a"]}]), '.spec.containers[name="c"].args'),
        (pod(nodeSelector={"disk": "hdd", "zone": "a"}), ".spec.nodeSelector"),
        (pod(tolerations=[{"key": "k", "operator": "Exists"}, {"key": "j"}]), ".spec.tolerations"),
    ]:
        message, _ = conflict(lambda change=change: POD.apply(live, change, "two", now=T1))
        assert message == f'Apply failed with 1 conflict: conflict with "one": {path}'
    # An atomic struct (LabelSelector) in a Deployment.
    created = stored(DEPLOYMENT.apply(None, APPLIED, "one", now=T0))
    change = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx-deployment"},
        "spec": {"selector": {"matchLabels": {"app": "other"}}},
    }
    message, _ = conflict(lambda: DEPLOYMENT.apply(created, change, "two", now=T1))
    assert message == 'Apply failed with 1 conflict: conflict with "one": .spec.selector'


def test_labels_are_owned_key_by_key():
    live = stored(CONFIGMAP.apply(None, configmap(labels={"a": "1"}), "one", now=T0))
    out = CONFIGMAP.apply(live, configmap(labels={"b": "2"}), "two", now=T1)
    assert out["metadata"]["labels"] == {"a": "1", "b": "2"}


# --- objects without managedFields ------------------------------------------------------------------


def test_first_apply_to_an_untracked_object_conflicts_with_before_first_apply():
    # TestUpdateBeforeFirstApply: fields of an object written while untracked belong to "before-first-apply".
    live = stored(CONFIGMAP.update(None, configmap({"a": "1"}, {"app": "my-nginx"}), "creator", now=T0))
    reset = copy.deepcopy(live)
    reset["metadata"]["managedFields"] = [{}]
    untracked = CONFIGMAP.update(live, reset, "creator", now=T1)
    assert "managedFields" not in untracked["metadata"]
    applied = configmap({"b": "2"}, {"app": "nginx"})
    message, causes = conflict(lambda: CONFIGMAP.apply(untracked, applied, "applier", now=T2))
    assert message == 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .metadata.labels.app'
    assert causes == [("FieldManagerConflict", 'conflict with "before-first-apply" using v1', ".metadata.labels.app")]
    out = CONFIGMAP.apply(untracked, applied, "applier", force=True, now=T2)
    assert managers(out) == [("applier", "Apply", "", T2), ("before-first-apply", "Update", "", T2)]
    # It keeps the labels map itself (a member without children is written as {}).
    assert fields(out, "before-first-apply") == '{"f:data":{".":{},"f:a":{}},"f:metadata":{"f:labels":{}}}'


# --- client-side apply interplay (last-applied-configuration) --------------------------------------


def test_kubectl_server_side_apply_takes_over_client_side_applied_fields():
    # TestApplyUsingLastAppliedAnnotation: no conflicts on what kubectl applied client-side.
    client_side = configmap({"a": "1"}, {"app": "x"})
    annotation = json.dumps(client_side, separators=(",", ":"), sort_keys=True) + "\n"
    obj = copy.deepcopy(client_side)
    obj["metadata"]["annotations"] = {ANNOTATION: annotation}
    live = stored(CONFIGMAP.update(None, obj, "kubectl-client-side-apply", now=T0))
    applied = configmap({"a": "2"}, {"app": "x"})
    out = CONFIGMAP.apply(live, applied, "kubectl", now=T1)
    assert out["data"] == {"a": "2"}
    assert out["metadata"]["annotations"][ANNOTATION] == (
        '{"apiVersion":"v1","data":{"a":"2"},"kind":"ConfigMap","metadata":{"labels":{"app":"x"},'
        '"name":"cm","namespace":"default"}}\n'
    )
    # Another field manager gets the conflict.
    message, _ = conflict(lambda: CONFIGMAP.apply(live, applied, "my-manager", now=T1))
    assert message == 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a'


def test_kubectl_still_conflicts_on_fields_changed_since_the_client_side_apply():
    client_side = configmap({"a": "1"})
    obj = copy.deepcopy(client_side)
    obj["metadata"]["annotations"] = {ANNOTATION: json.dumps(client_side)}
    live = stored(CONFIGMAP.update(None, obj, "kubectl-client-side-apply", now=T0))
    edited = copy.deepcopy(live)
    edited["data"]["a"] = "edited"
    live = CONFIGMAP.update(live, edited, "kubectl-edit", now=T1)
    message, _ = conflict(lambda: CONFIGMAP.apply(live, configmap({"a": "2"}), "kubectl", now=T2))
    assert message == 'Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.a'


# --- errors ---------------------------------------------------------------------------------------


def error_of(call):
    with pytest.raises(StatusError) as e:
        call()
    s = e.value.status
    return s.code, s.reason, s.message


def test_apply_of_another_kind_is_a_bad_request():  # TestVersionCheck
    assert error_of(
        lambda: DEPLOYMENT.apply(None, {"apiVersion": "apps/v1beta1", "kind": "Deployment"}, "m", now=T0)
    ) == (
        400,
        "BadRequest",
        "invalid object type: apps/v1beta1, Kind=Deployment",
    )
    assert error_of(lambda: DEPLOYMENT.apply(None, {}, "m", now=T0)) == (
        400,
        "BadRequest",
        "invalid object type: /, Kind=",
    )
    assert error_of(lambda: CONFIGMAP.apply(None, {"apiVersion": "v1", "kind": "Secret"}, "m", now=T0)) == (
        400,
        "BadRequest",
        "invalid object type: /v1, Kind=Secret",
    )


def test_apply_with_managed_fields_is_a_bad_request():  # TestApplyFailsWithManagedFields
    applied = {"apiVersion": "v1", "kind": "Pod", "metadata": {"managedFields": [{"manager": "test"}]}}
    assert error_of(lambda: POD.apply(None, applied, "m", now=T0)) == (
        400,
        "BadRequest",
        "metadata.managedFields must be nil",
    )


def test_apply_of_a_field_the_schema_lacks_is_a_500_without_reason():
    # kubernetes/kubernetes#122480: the typed patch object error is not a metav1.Status.
    applied = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "admin-api", "namespace": "general"},
        "spec": {"topologyKeys": ["x"]},
    }
    service = FieldManager(proto_type("k8s.io.api.core.v1.Service"), "v1")
    assert error_of(lambda: service.apply(None, applied, "m", now=T0)) == (
        500,
        "",
        "failed to create typed patch object (general/admin-api; /v1, Kind=Service): "
        ".spec.topologyKeys: field not declared in schema",
    )


def test_apply_with_duplicate_keys_is_a_500():
    applied = pod([{"name": "c", "image": "a"}, {"name": "c", "image": "b"}])
    assert error_of(lambda: POD.apply(None, applied, "m", now=T0)) == (
        500,
        "",
        "failed to create typed patch object (/p; /v1, Kind=Pod): "
        '.spec.containers: duplicate entries for key [name="c"]',
    )


# --- the store's timestamp-only revert ---------------------------------------------------------------


def test_timestamp_only_changes_are_reverted():
    old = stored(CONFIGMAP.update(None, configmap({"a": "1"}), "m", now=T0))
    new = copy.deepcopy(old)
    new["metadata"]["managedFields"][0]["time"] = T1
    assert ignore_managed_fields_timestamps(new, old)["metadata"]["managedFields"][0]["time"] == T0
    new["data"]["a"] = "2"  # the object changed: the new time stays
    assert ignore_managed_fields_timestamps(new, old) is new


# --- more of apimachinery's fieldmanager_test.go ---------------------------------------------------


def test_update_of_only_identity_metadata_owns_nothing():  # TestApplyStripsFields
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "b",
            "namespace": "b",
            "uid": "b",
            "generation": 0,
            "resourceVersion": "b",
            "creationTimestamp": T0,
            "managedFields": [{"manager": "update", "operation": "Apply", "apiVersion": "apps/v1"}],
        },
    }
    out = DEPLOYMENT.update(None, obj, "fieldmanager_test", now=T1)
    assert "managedFields" not in out["metadata"]


def test_apply_of_labels_only_is_recorded():  # TestApplyDoesNotStripLabels
    out = POD.apply(None, {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"a": "b"}}}, "m", now=T0)
    assert managers(out) == [("m", "Apply", "", T0)]
    assert fields(out, "m") == '{"f:metadata":{"f:labels":{"f:a":{}}}}'


def test_update_via_a_subresource_ignores_the_objects_managed_fields():  # TestUpdateViaSubresources
    obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "labels": {"a": "b"},
            "managedFields": [
                {
                    "manager": "test",
                    "operation": "Apply",
                    "apiVersion": "apps/v1",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:another_field": {}}}},
                }
            ],
        },
    }
    live = POD.update(None, obj, "fieldmanager_test_subresource", "scale", now=T0)
    assert managers(live) == [("fieldmanager_test_subresource", "Update", "scale", T0)]
    again = copy.deepcopy(obj)
    again["metadata"]["managedFields"] = []
    out = POD.update(live, again, "fieldmanager_test_subresource", "scale", now=T1)
    assert managers(out) == [("fieldmanager_test_subresource", "Update", "scale", T0)]


def test_reapplying_after_another_applier_changes_no_managed_fields():  # TestApplyDoesNotChangeManagedFields
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "deployment", "labels": {"app": "nginx"}},
        "spec": {
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
            },
        },
    }
    replicas = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "deployment"},
        "spec": {"replicas": 101},
    }
    live = stored(DEPLOYMENT.apply(None, deployment, "fieldmanager_z", now=T0))
    live = stored(DEPLOYMENT.apply(live, replicas, "fieldmanager_b", now=T1))
    before = copy.deepcopy(live["metadata"]["managedFields"])
    result = DEPLOYMENT.apply(live, deployment, "fieldmanager_z", now=T3)
    assert isinstance(result, Unchanged)
    assert live["metadata"]["managedFields"] == before


def test_cached_decodings_do_not_leak_between_writes():
    # Decoded FieldsV1 are shared between writes; results must not depend on earlier calls.
    live = stored(DEPLOYMENT.update(None, NGINX, "kubectl-create", now=T0))
    new = copy.deepcopy(live)
    new["spec"]["replicas"] = 3
    first = DEPLOYMENT.update(live, new, "kubectl-scale", now=T1)
    for _ in range(3):
        assert DEPLOYMENT.update(live, copy.deepcopy(new), "kubectl-scale", now=T1) == first
        assert DEPLOYMENT.update(first, copy.deepcopy(first), "kubectl-scale", now=T2) == first
    assert fields(first, "kubectl-scale") == '{"f:spec":{"f:replicas":{}}}'
    assert '"f:replicas"' not in fields(first, "kubectl-create")
