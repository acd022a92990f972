"""Strategic merge patch (application/strategic-merge-patch+json) on real kinds, as kube-apiserver 1.32
applies it (k8s.io/apimachinery/pkg/util/strategicpatch, driven by the kinds' patch strategies and
merge keys, and k8s.io/apiserver/pkg/endpoints/handlers/patch.go for the answers).

Each case names the upstream behaviour it mirrors: a case of strategicpatch/patch_test.go, or the
function of patch.go whose rule it exercises. List order matters and is compared exactly.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from protokube.gateway.errors import StatusError
from protokube.gateway.patch.dispatch import STRATEGIC_MERGE_PATCH, apply_patch
from protokube.gateway.patch.gofmt import ServerPanic
from protokube.schema.jsonencode import to_dict
from protokube.schema.typetree import Type, proto_type

POD = proto_type("k8s.io.api.core.v1.Pod")
DEPLOYMENT = proto_type("k8s.io.api.apps.v1.Deployment")
SERVICE = proto_type("k8s.io.api.core.v1.Service")
CONFIGMAP = proto_type("k8s.io.api.core.v1.ConfigMap")
WATCH_EVENT = proto_type("k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent")

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def smp(current: dict[str, Any], patch: Any, obj_type: Type = POD, validation: str = "Warn") -> Any:
    body = patch if isinstance(patch, bytes) else json.dumps(patch).encode()
    before = copy.deepcopy(current)
    result = apply_patch(STRATEGIC_MERGE_PATCH, current, body, obj_type, field_validation=validation)
    assert current == before, "the current object must not change"
    return result.object


def pod(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "labels": {"app": "web", "old": "x", "tier": "front"},
            "finalizers": ["a.example/one", "a.example/two"],
        },
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "image": "nginx:1.26",
                    "ports": [
                        {"containerPort": 80, "protocol": "TCP"},
                        {"containerPort": 53, "name": "dns", "protocol": "TCP"},
                    ],
                    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}],
                },
                {"name": "sidecar", "image": "busybox"},
            ],
            "nodeSelector": {"disk": "ssd", "zone": "a"},
            "securityContext": {"runAsUser": 1000},
            "tolerations": [{"key": "k1", "operator": "Exists"}, {"key": "k2", "operator": "Exists"}],
            **spec,
        },
        "status": {"phase": "Running"},
    }


def names(items: list[dict[str, Any]]) -> list[str]:
    return [item["name"] for item in items]


def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["containers"]


# -- Maps ----------------------------------------------------------------------------------------


def test_labels_add_change_and_delete_with_null() -> None:
    """mergeMap: a map merges key by key; null deletes (patch_test.go "delete field from map")."""
    result = smp(pod(), {"metadata": {"labels": {"tier": "back", "old": None, "new": "y"}}})
    assert result["metadata"]["labels"] == {"app": "web", "tier": "back", "new": "y"}


def test_null_deletes_a_field_and_a_whole_map() -> None:
    """mergeMap: patchV == nil deletes the key."""
    result = smp(pod(nodeName="n1"), {"metadata": {"labels": None}, "spec": {"nodeName": None}})
    assert "labels" not in result["metadata"]
    assert "nodeName" not in result["spec"]


def test_null_for_a_missing_key_is_dropped() -> None:
    """IgnoreUnmatchedNulls: a null with nothing to delete leaves no trace."""
    result = smp(pod(), {"spec": {"hostname": None, "affinity": {"nodeAffinity": None}}})
    assert "hostname" not in result["spec"]
    assert result["spec"]["affinity"] == {}


def test_nested_maps_merge_recursively() -> None:
    """handleMapDiff/mergeMap on structs: spec.template.metadata keeps what the patch does not name."""
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 1, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}},
    }
    patch = {"spec": {"replicas": 3, "template": {"metadata": {"annotations": {"restartedAt": "now"}}}}}
    result = smp(deployment, patch, DEPLOYMENT)
    assert result["spec"]["replicas"] == 3
    assert result["spec"]["template"]["metadata"] == {"labels": {"app": "web"}, "annotations": {"restartedAt": "now"}}


def test_configmap_data_merges_as_a_map() -> None:
    current = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}
    result = smp(current, {"data": {"b": None, "c": "3"}}, CONFIGMAP)
    assert result["data"] == {"a": "1", "c": "3"}


def test_patch_delete_on_a_map_empties_it() -> None:
    """handleDirectiveInMergeMap delete: the map becomes {} (patch_test.go "delete map from nested map")."""
    result = smp(pod(), {"spec": {"securityContext": {"$patch": "delete"}}})
    assert result["spec"]["securityContext"] == {}


def test_patch_replace_on_a_map() -> None:
    """handleDirectiveInMergeMap replace: the patch map, directive removed ("add key and delete all keys from map")."""
    result = smp(pod(), {"spec": {"nodeSelector": {"$patch": "replace", "zone": "b"}}})
    assert result["spec"]["nodeSelector"] == {"zone": "b"}


# -- Merge lists ---------------------------------------------------------------------------------


def test_containers_merge_by_name() -> None:
    """patchMergeKey name ("replace map field value in merging list"): other fields and items stay."""
    result = smp(pod(), {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}})
    assert names(containers(result)) == ["web", "sidecar"]
    assert containers(result)[0]["image"] == "nginx:1.27"
    assert containers(result)[0]["env"] == pod()["spec"]["containers"][0]["env"]


def test_new_container_goes_where_the_patch_puts_it() -> None:
    """mergeSortedSlice: an item the live list lacks precedes the server-only items after it
    (patch_test.go "preserve the order from the patch in a merging list 2")."""
    result = smp(pod(), {"spec": {"containers": [{"name": "debug", "image": "busybox"}]}})
    assert names(containers(result)) == ["debug", "web", "sidecar"]
    assert containers(result)[0] == {"name": "debug", "image": "busybox"}


def test_ports_merge_by_container_port_only() -> None:
    """ContainerPort's patchMergeKey is containerPort alone (the containerPort+protocol identity is
    server-side apply's): a UDP port 53 merges into the TCP one."""
    patch = {
        "spec": {
            "containers": [{"name": "web", "ports": [{"containerPort": 53, "protocol": "UDP", "name": "dns-udp"}]}]
        }
    }
    result = smp(pod(), patch)
    assert containers(result)[0]["ports"] == [
        {"containerPort": 80, "protocol": "TCP"},
        {"containerPort": 53, "name": "dns-udp", "protocol": "UDP"},
    ]


def test_env_merges_by_name() -> None:
    """patch_test.go "merge lists of maps": B changes in place, D (new) follows the named items."""
    patch = {
        "spec": {"containers": [{"name": "web", "env": [{"name": "B", "value": "20"}, {"name": "D", "value": "4"}]}]}
    }
    env = containers(smp(pod(), patch))[0]["env"]
    assert env == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "20"},
        {"name": "D", "value": "4"},
        {"name": "C", "value": "3"},
    ]


def test_service_ports_merge_by_port() -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}, {"name": "https", "port": 443}]},
    }
    result = smp(service, {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}, SERVICE)
    assert result["spec"]["ports"] == [{"name": "http", "port": 80, "targetPort": 9090}, {"name": "https", "port": 443}]


def test_merge_keys_compare_as_go_values() -> None:
    """findMapInSliceBasedOnKeyValue uses Go's ==: the float64 80.0 of a patch is not the int64 80."""
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}
    result = smp(service, b'{"spec": {"ports": [{"port": 80.0, "name": "x"}]}}', SERVICE)
    assert result["spec"]["ports"] == [{"port": 80.0, "name": "x"}, {"port": 80}]


def test_owner_references_merge_by_uid() -> None:
    current = pod()
    current["metadata"]["ownerReferences"] = [{"uid": "u1", "kind": "ReplicaSet", "name": "rs1"}]
    patch = {"metadata": {"ownerReferences": [{"uid": "u1", "controller": True}]}}
    result = smp(current, patch)
    assert result["metadata"]["ownerReferences"] == [
        {"uid": "u1", "kind": "ReplicaSet", "name": "rs1", "controller": True}
    ]


def test_patch_delete_on_a_list_item() -> None:
    """mergeSliceWithSpecialElements delete ("delete map from merging list")."""
    patch = {"spec": {"containers": [{"name": "web", "env": [{"name": "B", "$patch": "delete"}]}]}}
    assert containers(smp(pod(), patch))[0]["env"] == [{"name": "A", "value": "1"}, {"name": "C", "value": "3"}]


def test_patch_delete_of_a_missing_item_is_fine() -> None:
    """patch_test.go "delete missing map from merging list"."""
    patch = {"spec": {"containers": [{"name": "nope", "$patch": "delete"}]}}
    assert names(containers(smp(pod(), patch))) == ["web", "sidecar"]


def test_patch_replace_on_a_list() -> None:
    """A {"$patch": "replace"} item: the list becomes the patch's other items ("delete all items from merging list")."""
    patch = {"spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "x"}]}}
    assert containers(smp(pod(), patch)) == [{"name": "only", "image": "x"}]


def test_new_list_item_is_appended_as_given() -> None:
    """mergeSliceWithoutSpecialElements appends a new item as it is: its nulls stay."""
    patch = {"spec": {"containers": [{"name": "new", "image": "x", "command": None}]}}
    assert containers(smp(pod(), patch))[0] == {"name": "new", "image": "x", "command": None}


# -- $setElementOrder ------------------------------------------------------------------------------


def test_set_element_order_reorders() -> None:
    """mergePatchIntoOriginal with no patch list (patch_test.go "set elements order in a list")."""
    result = smp(pod(), {"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "web"}]}})
    assert names(containers(result)) == ["sidecar", "web"]


def test_set_element_order_with_an_addition() -> None:
    """patch_test.go "add an item in a list and preserve order"."""
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "web"}, {"name": "init"}, {"name": "sidecar"}],
            "containers": [{"name": "init", "image": "x"}],
        }
    }
    assert names(containers(smp(pod(), patch))) == ["web", "init", "sidecar"]


def test_set_element_order_with_a_deletion() -> None:
    """patch_test.go "delete an item in a list and preserve order"."""
    current = pod()
    current["spec"]["containers"].insert(1, {"name": "debug", "image": "busybox"})
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "web"}, {"name": "sidecar"}],
            "containers": [{"name": "debug", "$patch": "delete"}],
        }
    }
    assert names(containers(smp(current, patch))) == ["web", "sidecar"]


def test_set_element_order_keeps_server_only_items_in_place() -> None:
    """patch_test.go "add map and delete map from merging list": the live list's slots freed by the
    deletion hold the appended item when the order is decided (Go slices share their array)."""
    current = pod()
    current["spec"]["containers"] = [{"name": "one"}, {"name": "two", "image": "b"}, {"name": "four", "image": "c"}]
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "two"}, {"name": "three"}],
            "containers": [{"name": "three"}, {"name": "one", "$patch": "delete"}],
        }
    }
    assert names(containers(smp(current, patch))) == ["two", "four", "three"]


def test_set_element_order_of_a_primitive_list() -> None:
    """patch_test.go "set elements order in a int list" on finalizers."""
    patch = {"metadata": {"$setElementOrder/finalizers": ["a.example/two", "a.example/one"]}}
    assert smp(pod(), patch)["metadata"]["finalizers"] == ["a.example/two", "a.example/one"]


# -- Primitive lists -------------------------------------------------------------------------------


def test_finalizers_merge_as_a_set() -> None:
    """mergeSlice for scalars: deduplicated union (patch_test.go "merge lists of scalars")."""
    patch = {"metadata": {"finalizers": ["a.example/two", "b.example/three"]}}
    assert smp(pod(), patch)["metadata"]["finalizers"] == ["a.example/one", "a.example/two", "b.example/three"]


def test_finalizers_follow_the_patch_order() -> None:
    """customStrategicMergePatchTestCaseData "preserve the order from the patch in a merging int list" (2nd)."""
    current = pod()
    current["metadata"]["finalizers"] = ["a", "b", "c"]
    assert smp(current, {"metadata": {"finalizers": ["c", "a"]}})["metadata"]["finalizers"] == ["b", "c", "a"]


def test_delete_from_primitive_list() -> None:
    """$deleteFromPrimitiveList/finalizers ("$deleteFromPrimitiveList should delete item from a list
    with merge patch strategy"); an absent item changes nothing."""
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.example/one", "nope"]}}
    assert smp(pod(), patch)["metadata"]["finalizers"] == ["a.example/two"]


def test_delete_from_primitive_list_of_a_missing_list_adds_nothing() -> None:
    """patch_test.go "$deleteFromPrimitiveList on nonexistent primitive list should not add the primitive list"."""
    current = pod()
    del current["metadata"]["finalizers"]
    assert "finalizers" not in smp(current, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}})["metadata"]


# -- Lists without merge strategy ---------------------------------------------------------------------


def test_atomic_lists_are_replaced() -> None:
    """mergeSliceHandler: no merge strategy, the patch list replaces (as given)."""
    patch = {"spec": {"tolerations": [{"key": "k3", "effect": None}], "containers": [{"name": "web", "args": ["-v"]}]}}
    result = smp(pod(), patch)
    assert result["spec"]["tolerations"] == [{"key": "k3", "effect": None}]
    assert containers(result)[0]["args"] == ["-v"]


def test_a_list_the_object_lacks_is_added_without_directives_and_nulls() -> None:
    """mergeMap: a new value loses its nulls (discardNullValuesFromPatch) and $patch maps (removeDirectives)."""
    current = pod()
    del current["spec"]["tolerations"]
    patch = {
        "spec": {"tolerations": [{"key": "k", "operator": "Exists", "effect": None}, {"key": "x", "$patch": "delete"}]}
    }
    assert smp(current, patch)["spec"]["tolerations"] == [{"key": "k", "operator": "Exists"}]


def test_managed_fields_are_replaced_whole() -> None:
    """managedFields has no patch strategy; its untyped fieldsV1 is never merged into."""
    current = pod()
    current["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:metadata": {}}}]
    patch = {"metadata": {"managedFields": [{"manager": "other", "fieldsV1": {"f:spec": {}}}]}}
    assert smp(current, patch)["metadata"]["managedFields"] == [{"manager": "other", "fieldsV1": {"f:spec": {}}}]


# -- $retainKeys -----------------------------------------------------------------------------------


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "resourceVersion": "7",
            "annotations": {"deployment.kubernetes.io/revision": "1"},
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "nginx:1.26",
                            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                            "terminationMessagePath": "/dev/termination-log",
                            "imagePullPolicy": "IfNotPresent",
                        },
                        {"name": "sidecar", "image": "busybox", "imagePullPolicy": "Always"},
                    ],
                    "volumes": [{"name": "data", "emptyDir": {}}],
                    "restartPolicy": "Always",
                },
            },
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
        },
        "status": {"replicas": 1},
    }


def test_retain_keys_switches_deployment_strategy_to_recreate() -> None:
    """patch_test.go "retainKeys map should clear defaulted field": the defaulted rollingUpdate goes."""
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    assert smp(deployment(), patch, DEPLOYMENT)["spec"]["strategy"] == {"type": "Recreate"}


def test_without_retain_keys_the_strategy_merges() -> None:
    """customStrategicMergePatchTestCaseData "retainKeys map can change a field when no retainKeys
    directive present"."""
    result = smp(deployment(), {"spec": {"strategy": {"type": "Recreate"}}}, DEPLOYMENT)
    assert result["spec"]["strategy"] == {
        "type": "Recreate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }


def test_retain_keys_switches_a_volume_source() -> None:
    """patch_test.go "retainKeys list of maps clears a field": volumes are merge,retainKeys."""
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/volumes": [{"name": "data"}],
                    "volumes": [
                        {
                            "$retainKeys": ["configMap", "name"],
                            "configMap": {"name": "cfg"},
                            "emptyDir": None,
                            "name": "data",
                        }
                    ],
                }
            }
        }
    }
    result = smp(deployment(), patch, DEPLOYMENT)
    assert result["spec"]["template"]["spec"]["volumes"] == [{"name": "data", "configMap": {"name": "cfg"}}]


# -- kubectl apply (client-side) -------------------------------------------------------------------


def last_applied(image: str, containers: list[dict[str, Any]]) -> str:
    """The annotation kubectl writes: the applied object (annotations {} inside) as encoded by
    unstructured JSON (sorted keys), with the encoder's trailing newline."""
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"annotations": {}, "name": "web", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}},
        },
    }
    del image
    return json.dumps(obj, separators=(",", ":"), sort_keys=True) + "\n"


def applied_deployment() -> dict[str, Any]:
    current = deployment()
    applied = [
        {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}], "image": "nginx:1.26", "name": "app"},
        {"image": "busybox", "name": "sidecar"},
    ]
    current["metadata"]["annotations"][LAST_APPLIED] = last_applied("nginx:1.26", applied)
    return current


def test_kubectl_apply_changes_an_image() -> None:
    """CreateThreeWayMergePatch with SetElementOrder, as kubectl 1.32 sends it (keys sorted by Go's encoder)."""
    annotation = last_applied(
        "nginx:1.27",
        [
            {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}], "image": "nginx:1.27", "name": "app"},
            {"image": "busybox", "name": "sidecar"},
        ],
    )
    body = (
        '{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":'
        + json.dumps(annotation)
        + "}},"
        '"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"app"},{"name":"sidecar"}],'
        '"containers":[{"image":"nginx:1.27","name":"app"}]}}}}'
    ).encode()
    result = smp(applied_deployment(), body, DEPLOYMENT)
    expected = applied_deployment()
    expected["metadata"]["annotations"][LAST_APPLIED] = annotation
    expected["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"
    assert result == expected


def test_kubectl_apply_removes_a_container() -> None:
    annotation = last_applied(
        "nginx:1.26",
        [{"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}], "image": "nginx:1.26", "name": "app"}],
    )
    body = (
        '{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":'
        + json.dumps(annotation)
        + "}},"
        '"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"app"}],'
        '"containers":[{"$patch":"delete","name":"sidecar"}]}}}}'
    ).encode()
    result = smp(applied_deployment(), body, DEPLOYMENT)
    expected = applied_deployment()
    expected["metadata"]["annotations"][LAST_APPLIED] = annotation
    del expected["spec"]["template"]["spec"]["containers"][1]
    assert result == expected


def test_kubectl_apply_removes_an_env_var() -> None:
    annotation = last_applied(
        "nginx:1.26",
        [
            {"env": [{"name": "A", "value": "1"}], "image": "nginx:1.26", "name": "app"},
            {"image": "busybox", "name": "sidecar"},
        ],
    )
    body = (
        '{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":'
        + json.dumps(annotation)
        + "}},"
        '"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"app"},{"name":"sidecar"}],'
        '"containers":[{"$setElementOrder/env":[{"name":"A"}],"env":[{"$patch":"delete","name":"B"}],"name":"app"}]}}}}'
    ).encode()
    result = smp(applied_deployment(), body, DEPLOYMENT)
    expected = applied_deployment()
    expected["metadata"]["annotations"][LAST_APPLIED] = annotation
    expected["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    assert result == expected


def test_kubectl_apply_switches_strategy() -> None:
    """The defaulted rollingUpdate was never in last-applied: only $retainKeys can clear it."""
    body = b'{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}'
    result = smp(applied_deployment(), body, DEPLOYMENT)
    assert result["spec"]["strategy"] == {"type": "Recreate"}
    assert result["spec"]["template"] == applied_deployment()["spec"]["template"]


# -- Untyped values ------------------------------------------------------------------------------


def test_untyped_raw_extension_merges_scalars_like_merge_patch() -> None:
    """WatchEvent.object is a runtime.RawExtension (untyped): scalars replace, null deletes."""
    current = {"type": "ADDED", "object": {"kind": "Pod", "apiVersion": "v1", "extra": "x"}}
    result = smp(current, {"object": {"kind": "Node", "extra": None, "new": 1}}, WATCH_EVENT)
    assert result == {"type": "ADDED", "object": {"kind": "Node", "apiVersion": "v1", "new": 1}}


def test_untyped_raw_extension_cannot_merge_nested_objects() -> None:
    """Upstream looks the nested key up in the RawExtension Go struct, which has no JSON fields."""
    current = {"type": "ADDED", "object": {"kind": "Pod", "spec": {"a": 1}}}
    with pytest.raises(StatusError) as excinfo:
        smp(current, {"object": {"spec": {"b": 2}}}, WATCH_EVENT)
    assert status(excinfo) == internal('unable to find api field in struct RawExtension for the json field "spec"')
    # a nested object the current value lacks is simply added
    assert smp({"type": "ADDED", "object": {}}, {"object": {"spec": {"b": 2}}}, WATCH_EVENT)["object"] == {
        "spec": {"b": 2}
    }


def test_whole_object_replace() -> None:
    """A top-level $patch: replace: the object becomes the patch."""
    patch = {"$patch": "replace", "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}
    assert smp(pod(), patch) == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}


def test_patch_map_is_reported_after_the_merge() -> None:
    """strict decoding errors show %+v of the patch map as the merge left it (directives consumed)."""
    body = (
        b'{"metadata": {"labels": {"a": "1", "a": "2"}},'
        b' "spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "web"}]}}'
    )
    result = apply_patch(STRATEGIC_MERGE_PATCH, pod(), body, POD)
    assert result.strict_errors == ['duplicate field "metadata.labels.a"']
    assert result.invalid_value == "map[metadata:map[labels:map[a:2]] spec:map[]]"


# -- Errors ------------------------------------------------------------------------------------------


def status(excinfo: pytest.ExceptionInfo[StatusError]) -> dict[str, Any]:
    return to_dict(excinfo.value.status)


def internal(message: str) -> dict[str, Any]:
    """A plain Go error from strategicpatch: ErrorToAPIStatus makes it 500, reason "" (omitted)."""
    return {"metadata": {}, "status": "Failure", "message": message, "code": 500}


def bad_request(message: str) -> dict[str, Any]:
    return {"metadata": {}, "status": "Failure", "message": message, "reason": "BadRequest", "code": 400}


ERRORS = [
    (
        "merge item without its merge key",
        {"spec": {"containers": [{"image": "nginx"}]}},
        internal("map: map[image:nginx] does not contain declared merge key: name"),
    ),
    (
        "delete item without its merge key",
        {"spec": {"containers": [{"$patch": "delete", "image": "nginx"}]}},
        internal("map: map[$patch:delete image:nginx] does not contain declared merge key: name"),
    ),
    (
        "unknown $patch on a list item",
        {"spec": {"containers": [{"$patch": "remove", "name": "web"}]}},
        internal("unknown patch type: remove in map: map[$patch:remove name:web]"),
    ),
    (
        "$patch: merge on a list item",
        {"spec": {"containers": [{"$patch": "merge", "name": "web"}]}},
        internal("merging lists cannot yet be specified in the patch"),
    ),
    (
        "unknown $patch on a map",
        {"spec": {"nodeSelector": {"$patch": "merge", "zone": "b"}}},
        internal("unknown patch type: merge in map: map[$patch:merge zone:b]"),
    ),
    (
        "$patch that is not a string",
        {"spec": {"nodeSelector": {"$patch": 1}}},
        internal("unknown patch type: %!s(int64=1) in map: map[$patch:1]"),
    ),
    (
        "$setElementOrder without a field",
        {"spec": {"$setElementOrder": [{"name": "web"}]}},
        bad_request("invalid patch format of setElementOrder list"),
    ),
    (
        "$deleteFromPrimitiveList without a field",
        {"metadata": {"$deleteFromPrimitiveList": ["x"]}},
        bad_request("invalid patch format of primitive list"),
    ),
    (
        "$retainKeys that is not a list",
        {"spec": {"strategy": {"$retainKeys": "type", "type": "Recreate"}}},
        bad_request("invalid patch format of retainKeys"),
    ),
    (
        "patch key missing from $retainKeys",
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}},
        bad_request("invalid patch format of retainKeys"),
    ),
    (
        "$setElementOrder that does not match the patch list",
        {"spec": {"$setElementOrder/containers": [{"name": "web"}], "containers": [{"name": "sidecar", "image": "x"}]}},
        internal(
            "The order in patch list:\n[map[image:x name:sidecar]]\n"
            " doesn't match $setElementOrder list:\n[map[name:web]]\n"
        ),
    ),
    (
        "$setElementOrder that is not a list",
        {"spec": {"$setElementOrder/containers": "web"}},
        internal("expected a []interface {}, but received a string"),
    ),
    (
        "$setElementOrder of an unknown field",
        {"spec": {"$setElementOrder/sidecars": [{"name": "web"}]}},
        internal('unable to find api field in struct PodSpec for the json field "sidecars"'),
    ),
    (
        "$setElementOrder of a field that is not a list",
        {"spec": {"$setElementOrder/hostname": ["x"]}},
        internal("expected slice or array type, but got: struct"),
    ),
    (
        "list items of different types",
        {"metadata": {"finalizers": [1]}},
        internal("list element types are not identical: [[a.example/one a.example/two] [1]]"),
    ),
    (
        "a null list item",
        {"metadata": {"finalizers": [None]}},
        internal("list element types are not identical: [[a.example/one a.example/two] [<nil>]]"),
    ),
]


@pytest.mark.parametrize(("case", "patch", "expected"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(case: str, patch: dict[str, Any], expected: dict[str, Any]) -> None:
    current, obj_type = (deployment(), DEPLOYMENT) if "retainKeys" in case else (pod(), POD)
    with pytest.raises(StatusError) as excinfo:
        smp(current, patch, obj_type)
    assert status(excinfo) == expected


def test_list_of_lists_is_422() -> None:
    """ErrNoListOfLists: interpretStrategicMergePatchError answers NewGenericServerResponse(422, ...)."""
    current = pod()
    current["metadata"]["finalizers"] = [["x"]]
    with pytest.raises(StatusError) as excinfo:
        smp(current, {"metadata": {"finalizers": [["y"]]}})
    assert status(excinfo) == {
        "metadata": {},
        "status": "Failure",
        "message": "the server rejected our request due to an error in our request",
        "reason": "Invalid",
        "details": {},
        "code": 422,
    }


def test_unhashable_items_panic() -> None:
    """partitionPrimitivesByPresentInList keys a Go map by the items: a map item panics
    ("hash of unhashable type"), and kube-apiserver answers its plain-text 500."""
    with pytest.raises(ServerPanic) as excinfo:
        smp(pod(), {"metadata": {"$setElementOrder/finalizers": [{"a": 1}]}})
    assert excinfo.value.reason == "runtime error: hash of unhashable type map[string]interface {}"
    assert excinfo.value.code == 500


# Decoding (strategicPatchObject): sigs.k8s.io/json into map[string]interface{}, 400 with its text.
DECODE_ERRORS = [
    (b"", "unexpected end of JSON input"),
    (b"{", "unexpected end of JSON input"),
    (b'{"spec": }', "invalid character '}' looking for beginning of value"),
    (b"{'a': 1}", "invalid character '\\'' looking for beginning of object key string"),
    (b'{"a": 1} x', "invalid character 'x' after top-level value"),
    (b"[]", "json: cannot unmarshal array into Go value of type map[string]interface {}"),
    (b'"x"', "json: cannot unmarshal string into Go value of type map[string]interface {}"),
    (b'{"spec": {"replicas": 1e999}}', "json: cannot unmarshal number 1e999 into Go value of type float64"),
]


@pytest.mark.parametrize(("body", "message"), DECODE_ERRORS)
@pytest.mark.parametrize("validation", ["Ignore", "Strict"])
def test_decoding_errors(body: bytes, message: str, validation: str) -> None:
    with pytest.raises(StatusError) as excinfo:
        smp(pod(), body, validation=validation)
    assert status(excinfo) == bad_request(message)


def test_null_body_changes_nothing() -> None:
    assert smp(pod(), b"null") == pod()


def test_custom_resources_do_not_take_strategic_merge_patch() -> None:
    """A kind without Go type information: 415 with the custom resource handler's patch types."""
    with pytest.raises(StatusError) as excinfo:
        apply_patch(STRATEGIC_MERGE_PATCH, {"a": 1}, b"{}", None)
    assert status(excinfo) == {
        "metadata": {},
        "status": "Failure",
        "message": "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        "reason": "UnsupportedMediaType",
        "code": 415,
    }
