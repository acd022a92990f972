"""Strategic merge patch against a running server, case by case (upstream's strategicpatch semantics:
the expected results are upstream's documented behaviour, as tests/patch checks the library in depth).

Each case creates a pod spec (a PodTemplate's: a Pod's own may change only in images) or a
Deployment, PATCHes it with application/strategic-merge-patch+json, and
compares what a client reads back at one path (lists in order).
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

import httpx
import pytest

STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}
_names = itertools.count()

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"labels": {"app": "web", "old": "x"}, "finalizers": ["a.example/one", "a.example/two"]},
    "spec": {
        "containers": [
            {
                "name": "web",
                "image": "nginx:1.26",
                "ports": [{"containerPort": 80}, {"containerPort": 53, "name": "dns"}],
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}],
            },
            {"name": "side", "image": "busybox"},
        ],
        "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "cfg"}}],
        "tolerations": [{"key": "k1", "operator": "Exists"}, {"key": "k2", "operator": "Exists"}],
        "nodeSelector": {"disk": "ssd", "zone": "a"},
    },
}
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "spec": {
        "selector": {"matchLabels": {"app": "d"}},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "d", "image": "nginx"}]}},
    },
}


def env(obj: dict) -> list[str]:
    return [f"{e['name']}={e.get('value', '')}" for e in obj["spec"]["containers"][0].get("env", [])]


def containers(obj: dict) -> list[str]:
    return [f"{c['name']}:{c['image']}" for c in obj["spec"]["containers"]]


# (case, kind, patch, what to read back, expected)
CASES: list[tuple[str, str, dict, Any, Any]] = [
    (
        "labels merge; null deletes",
        "pod",
        {"metadata": {"labels": {"new": "y", "old": None}}},
        lambda o: o["metadata"]["labels"],
        {"app": "web", "new": "y"},
    ),
    (
        "a whole map deleted with null",
        "pod",
        {"spec": {"nodeSelector": None}},
        lambda o: "nodeSelector" in o["spec"],
        False,
    ),
    (
        "containers merge by name",
        "pod",
        {"spec": {"containers": [{"name": "side", "image": "busybox:2"}]}},
        containers,
        ["web:nginx:1.26", "side:busybox:2"],
    ),
    (
        "a new container is added",
        "pod",
        {"spec": {"containers": [{"name": "extra", "image": "redis"}]}},
        containers,
        ["extra:redis", "web:nginx:1.26", "side:busybox"],
    ),
    (
        "$patch: delete removes a container",
        "pod",
        {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}},
        containers,
        ["web:nginx:1.26"],
    ),
    (
        "$patch: replace replaces the list",
        "pod",
        {"spec": {"containers": [{"name": "only", "image": "redis"}, {"$patch": "replace"}]}},
        containers,
        ["only:redis"],
    ),
    (
        "env merges by name",
        "pod",
        {"spec": {"containers": [{"name": "web", "env": [{"name": "B", "value": "two"}]}]}},
        env,
        ["A=1", "B=two", "C=3"],
    ),
    (
        "env item deleted",
        "pod",
        {"spec": {"containers": [{"name": "web", "env": [{"name": "B", "$patch": "delete"}]}]}},
        env,
        ["A=1", "C=3"],
    ),
    (
        "ports merge by containerPort",
        "pod",
        {"spec": {"containers": [{"name": "web", "ports": [{"containerPort": 53, "name": "dns2"}]}]}},
        lambda o: [(p["containerPort"], p.get("name", "")) for p in o["spec"]["containers"][0]["ports"]],
        [(80, ""), (53, "dns2")],
    ),
    (
        "$setElementOrder reorders containers",
        "pod",
        {"spec": {"$setElementOrder/containers": [{"name": "side"}, {"name": "web"}]}},
        containers,
        ["side:busybox", "web:nginx:1.26"],
    ),
    (
        "$setElementOrder with an addition",
        "pod",
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "web"}, {"name": "mid"}, {"name": "side"}],
                "containers": [{"name": "mid", "image": "redis"}],
            }
        },
        containers,
        ["web:nginx:1.26", "mid:redis", "side:busybox"],
    ),
    (
        "$setElementOrder with a deletion",
        "pod",
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "side"}],
                "containers": [{"name": "web", "$patch": "delete"}],
            }
        },
        containers,
        ["side:busybox"],
    ),
    (
        "$setElementOrder of env",
        "pod",
        {
            "spec": {
                "containers": [{"name": "web", "$setElementOrder/env": [{"name": "C"}, {"name": "A"}, {"name": "B"}]}]
            }
        },
        env,
        ["C=3", "A=1", "B=2"],
    ),
    (
        "finalizers merge as a set",
        "pod",
        {"metadata": {"finalizers": ["a.example/three"]}},
        lambda o: o["metadata"]["finalizers"],
        ["a.example/three", "a.example/one", "a.example/two"],  # upstream's mergeSortedSlice
    ),
    (
        "finalizers merge as a sorted set",
        "pod",
        {"metadata": {"finalizers": ["a.example/two", "b.example/3"]}},
        lambda o: o["metadata"]["finalizers"],
        ["a.example/one", "a.example/two", "b.example/3"],
    ),
    (
        "$deleteFromPrimitiveList",
        "pod",
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.example/one"]}},
        lambda o: o["metadata"]["finalizers"],
        ["a.example/two"],
    ),
    (
        "$setElementOrder of a primitive list",
        "pod",
        {"metadata": {"$setElementOrder/finalizers": ["a.example/two", "a.example/one"]}},
        lambda o: o["metadata"]["finalizers"],
        ["a.example/two", "a.example/one"],
    ),
    (
        "tolerations are replaced (no merge key)",
        "pod",
        {"spec": {"tolerations": [{"key": "k3", "operator": "Exists"}]}},
        lambda o: [t["key"] for t in o["spec"]["tolerations"]],
        ["k3"],
    ),
    (
        "volumes merge by name",
        "pod",
        {"spec": {"volumes": [{"name": "data", "emptyDir": {"medium": "Memory"}}]}},
        lambda o: [(v["name"], v.get("emptyDir")) for v in o["spec"]["volumes"]],
        [("data", {"medium": "Memory"}), ("cfg", None)],
    ),
    (
        "volume source switched with $retainKeys",
        "pod",
        {"spec": {"volumes": [{"name": "data", "hostPath": {"path": "/x"}, "$retainKeys": ["hostPath", "name"]}]}},
        lambda o: sorted(o["spec"]["volumes"][0]),
        ["hostPath", "name"],
    ),
    (
        "map in a map merges",
        "pod",
        {"spec": {"nodeSelector": {"zone": "b"}}},
        lambda o: o["spec"]["nodeSelector"],
        {"disk": "ssd", "zone": "b"},
    ),
    (
        "$patch: replace on a map",
        "pod",
        {"spec": {"nodeSelector": {"only": "this", "$patch": "replace"}}},
        lambda o: o["spec"]["nodeSelector"],
        {"only": "this"},
    ),
    (
        "$patch: delete on a map",
        "pod",
        {"metadata": {"labels": {"$patch": "delete"}}},
        lambda o: "labels" in o["metadata"],
        False,
    ),
    (
        "Deployment strategy switched with $retainKeys",
        "deployment",
        {"spec": {"strategy": {"type": "Recreate", "$retainKeys": ["type"]}}},
        lambda o: o["spec"]["strategy"],
        {"type": "Recreate"},
    ),
    (
        "Deployment template merges",
        "deployment",
        {"spec": {"template": {"metadata": {"annotations": {"restartedAt": "now"}}}}},
        lambda o: o["spec"]["template"]["metadata"],
        {"creationTimestamp": None, "labels": {"app": "d"}, "annotations": {"restartedAt": "now"}},
    ),
    (
        "Deployment replicas and image",
        "deployment",
        {"spec": {"replicas": 4, "template": {"spec": {"containers": [{"name": "d", "image": "nginx:2"}]}}}},
        lambda o: (o["spec"]["replicas"], o["spec"]["template"]["spec"]["containers"][0]["image"]),
        (4, "nginx:2"),
    ),
    (
        "kubectl's removal of an env var",
        "pod",
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "web"}, {"name": "side"}],
                "containers": [
                    {
                        "$setElementOrder/env": [{"name": "A"}, {"name": "C"}],
                        "env": [{"$patch": "delete", "name": "B"}],
                        "name": "web",
                    }
                ],
            }
        },
        env,
        ["A=1", "C=3"],
    ),
]


@pytest.mark.parametrize(("case", "kind", "patch", "read", "expected"), CASES, ids=[c[0] for c in CASES])
def test_strategic_merge_patch(
    client: httpx.Client, namespace: str, case: str, kind: str, patch: dict, read: Any, expected: Any
) -> None:
    name = f"s{next(_names)}"
    view = read
    if kind == "pod":
        # A Pod's own spec may change only in images (upstream's pod update rule): the pod spec
        # patched here is a PodTemplate's, with the Pod's metadata on the template object.
        path = f"/api/v1/namespaces/{namespace}/podtemplates"
        body = {"metadata": copy.deepcopy(POD["metadata"]), "template": {"spec": copy.deepcopy(POD["spec"])}}
        if "spec" in patch:
            patch = {**{k: v for k, v in patch.items() if k != "spec"}, "template": {"spec": patch["spec"]}}

        def view(obj: dict) -> Any:
            return read({**obj, "spec": obj["template"]["spec"]})

    else:
        path, body = f"/apis/apps/v1/namespaces/{namespace}/deployments", copy.deepcopy(DEPLOYMENT)
    body["metadata"] = {**body.get("metadata", {}), "name": name}
    assert client.post(path, json=body).status_code == 201
    patched = client.patch(f"{path}/{name}", json=patch, headers=STRATEGIC)
    assert patched.status_code == 200, patched.text
    assert view(patched.json()) == expected
    assert view(client.get(f"{path}/{name}").json()) == expected


def test_malformed_directives_and_missing_merge_keys(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    body = copy.deepcopy(POD)
    body["metadata"] = {**body["metadata"], "name": "bad"}
    client.post(path, json=body)
    before = client.get(f"{path}/bad").json()
    no_key = client.patch(f"{path}/bad", json={"spec": {"containers": [{"image": "x"}]}}, headers=STRATEGIC)
    # upstream answers 500 with this message; a client's mistake is a 400 here
    assert no_key.status_code == 400 and "does not contain declared merge key: name" in no_key.json()["message"]
    bad_directive = client.patch(f"{path}/bad", json={"spec": {"nodeSelector": {"$patch": "nope"}}}, headers=STRATEGIC)
    assert bad_directive.status_code == 400
    # upstream's handler panics on these (a plain-text 500); a client's mistake is a 400 here
    null_item = client.patch(f"{path}/bad", json={"metadata": {"finalizers": [None]}}, headers=STRATEGIC)
    assert null_item.status_code == 400 and null_item.json()["reason"] == "BadRequest", null_item.text
    test_op = [{"op": "test", "path": "/metadata/nothing"}]
    no_value = client.patch(f"{path}/bad", json=test_op, headers={"Content-Type": "application/json-patch+json"})
    assert no_value.status_code == 400 and "panic" not in no_value.text.lower(), no_value.text
    assert client.get(f"{path}/bad").json() == before
