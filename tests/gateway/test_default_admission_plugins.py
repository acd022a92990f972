"""The small admission plugins of kube-apiserver's default set, on the shared server, with
upstream's outcomes and messages: DefaultStorageClass, DefaultIngressClass,
PersistentVolumeClaimResize, RuntimeClass, TaintNodesByCondition and StorageObjectInUseProtection
(with the pvc-protection and pv-protection controllers). Every cluster-scoped object a
test makes is deleted at its end."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from .helpers import GatewayProcess, eventually

STORAGE_CLASSES = "/apis/storage.k8s.io/v1/storageclasses"
INGRESS_CLASSES = "/apis/networking.k8s.io/v1/ingressclasses"
RUNTIME_CLASSES = "/apis/node.k8s.io/v1/runtimeclasses"
NODES = "/api/v1/nodes"
DEFAULT_STORAGE_CLASS = {"storageclass.kubernetes.io/is-default-class": "true"}
DEFAULT_INGRESS_CLASS = {"ingressclass.kubernetes.io/is-default-class": "true"}


@contextmanager
def cluster_objects(client: httpx.Client, path: str, *bodies: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
    """Cluster-scoped objects made for one test, deleted after it."""
    made: list[dict[str, Any]] = []
    try:
        for body in bodies:
            response = client.post(path, json=body)
            assert response.status_code == 201, response.text
            made.append(response.json())
        yield made
    finally:
        for obj in made:
            client.delete(f"{path}/{obj['metadata']['name']}")


def created(client: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(path, json=body)
    assert response.status_code == 201, response.text
    return response.json()


def refused(response: httpx.Response, message: str) -> None:
    assert response.status_code == 403, response.text
    status = response.json()
    assert (status["reason"], status["message"]) == ("Forbidden", message)


def claim(name: str, storage: str = "1Gi", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}, **spec},
    }


def storage_class(name: str, **fields: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "provisioner": "example.com/disks", **fields}


def test_default_storage_class(client: httpx.Client, namespace: str) -> None:
    claims = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims"
    older = storage_class(f"{namespace}-a", metadata={"name": f"{namespace}-a", "annotations": DEFAULT_STORAGE_CLASS})
    newer = storage_class(f"{namespace}-b", metadata={"name": f"{namespace}-b", "annotations": DEFAULT_STORAGE_CLASS})
    plain = storage_class(f"{namespace}-c")
    with cluster_objects(client, STORAGE_CLASSES, older):
        time.sleep(1.1)  # creation timestamps are whole seconds: the newer default is newer
        with cluster_objects(client, STORAGE_CLASSES, newer, plain):
            # of several defaults the newest, not the first by name (1.26 on)
            assert created(client, claims, claim("defaulted"))["spec"]["storageClassName"] == f"{namespace}-b"
            named = created(client, claims, claim("named", storageClassName=f"{namespace}-c"))
            assert named["spec"]["storageClassName"] == f"{namespace}-c"
            assert created(client, claims, claim("none", storageClassName=""))["spec"]["storageClassName"] == ""
            beta = claim("beta")
            beta["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": f"{namespace}-c"}
            assert "storageClassName" not in created(client, claims, beta)["spec"]
            dry = client.post(f"{claims}?dryRun=All", json=claim("dry"))
            assert dry.status_code == 201 and dry.json()["spec"]["storageClassName"] == f"{namespace}-b"
    without = created(client, claims, claim("without"))  # no default class any more
    assert "storageClassName" not in without["spec"]


def test_default_ingress_class(client: httpx.Client, namespace: str) -> None:
    ingresses = f"/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses"
    backend = {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}
    default = {
        "metadata": {"name": f"{namespace}-default", "annotations": DEFAULT_INGRESS_CLASS},
        "spec": {"controller": "example.com/ingress"},
    }
    other = {"metadata": {"name": f"{namespace}-other"}, "spec": {"controller": "example.com/ingress"}}
    with cluster_objects(client, INGRESS_CLASSES, default, other):
        got = created(client, ingresses, {"metadata": {"name": "plain"}, "spec": backend})
        assert got["spec"]["ingressClassName"] == f"{namespace}-default"
        named = {"metadata": {"name": "named"}, "spec": {**backend, "ingressClassName": f"{namespace}-other"}}
        assert created(client, ingresses, named)["spec"]["ingressClassName"] == f"{namespace}-other"
        annotated = {
            "metadata": {"name": "annotated", "annotations": {"kubernetes.io/ingress.class": "nginx"}},
            "spec": backend,
        }
        assert "ingressClassName" not in created(client, ingresses, annotated)["spec"]
    assert "ingressClassName" not in created(client, ingresses, {"metadata": {"name": "late"}, "spec": backend})["spec"]


def bind(client: httpx.Client, claims: str, name: str) -> None:
    """The claim's status as the PV controller writes it once bound."""
    current = client.get(f"{claims}/{name}").json()
    current["status"] = {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    response = client.put(f"{claims}/{name}/status", json=current)
    assert response.status_code == 200, response.text


def grow(client: httpx.Client, claims: str, name: str, storage: str) -> httpx.Response:
    patch = {"spec": {"resources": {"requests": {"storage": storage}}}}
    return client.patch(f"{claims}/{name}", json=patch, headers={"Content-Type": "application/merge-patch+json"})


def test_persistent_volume_claim_resize(client: httpx.Client, namespace: str) -> None:
    claims = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims"
    expandable = storage_class(f"{namespace}-grows", allowVolumeExpansion=True)
    fixed = storage_class(f"{namespace}-fixed", allowVolumeExpansion=False)
    unsaid = storage_class(f"{namespace}-unsaid")
    with cluster_objects(client, STORAGE_CLASSES, expandable, fixed, unsaid):
        for name in ("grows", "fixed", "unsaid", "classless"):
            spec = {"storageClassName": f"{namespace}-{name}" if name != "classless" else ""}
            created(client, claims, claim(name, **spec))
            bind(client, claims, name)
        grown = grow(client, claims, "grows", "2Gi")
        assert grown.status_code == 200, grown.text
        assert grown.json()["spec"]["resources"]["requests"]["storage"] == "2Gi"
        message = (
            "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must "
            "support resize"
        )
        for name in ("fixed", "unsaid", "classless"):
            refused(grow(client, claims, name, "2Gi"), f'persistentvolumeclaims "{name}" is forbidden: {message}')
        refused(
            client.patch(
                f"{claims}/fixed?dryRun=All",
                json={"spec": {"resources": {"requests": {"storage": "5Gi"}}}},
                headers={"Content-Type": "application/merge-patch+json"},
            ),
            f'persistentvolumeclaims "fixed" is forbidden: {message}',
        )
        # a claim not bound yet: validation (which runs first) refuses any change of its spec
        created(client, claims, claim("pending", storageClassName=f"{namespace}-grows"))
        pending = grow(client, claims, "pending", "2Gi")
        assert pending.status_code == 422, pending.text
        assert "spec is immutable after creation except resources.requests" in pending.json()["message"]
        same = grow(client, claims, "fixed", "1024Mi")  # the same quantity written otherwise: no growth
        assert same.status_code == 200, same.text


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def test_runtime_class(client: httpx.Client, namespace: str) -> None:
    pods = f"/api/v1/namespaces/{namespace}/pods"
    sandboxed = {
        "metadata": {"name": f"{namespace}-sandboxed"},
        "handler": "runsc",
        "overhead": {"podFixed": {"cpu": "100m", "memory": "64Mi"}},
        "scheduling": {
            "nodeSelector": {"sandbox": "gvisor"},
            "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }
    plain = {"metadata": {"name": f"{namespace}-plain"}, "handler": "runc"}
    sandbox_name, plain_name = f"{namespace}-sandboxed", f"{namespace}-plain"
    with cluster_objects(client, RUNTIME_CLASSES, sandboxed, plain):
        got = created(
            client,
            pods,
            pod(
                "sandboxed",
                runtimeClassName=sandbox_name,
                nodeSelector={"zone": "a"},
                tolerations=[{"key": "sandbox", "operator": "Equal", "value": "x", "effect": "NoSchedule"}],
            ),
        )["spec"]
        assert got["overhead"] == {"cpu": "100m", "memory": "64Mi"}
        assert got["nodeSelector"] == {"zone": "a", "sandbox": "gvisor"}
        # the pod's own toleration is redundant beside the class's Exists one: merged away (the
        # NoExecute ones are DefaultTolerationSeconds', which runs before)
        assert [(t["key"], t["operator"]) for t in got["tolerations"]] == [
            ("node.kubernetes.io/not-ready", "Exists"),
            ("node.kubernetes.io/unreachable", "Exists"),
            ("sandbox", "Exists"),
        ]
        same = created(
            client, pods, pod("same", runtimeClassName=sandbox_name, overhead={"cpu": "0.1", "memory": "64Mi"})
        )
        assert same["spec"]["overhead"] == {"cpu": "100m", "memory": "64Mi"}
        refused(
            client.post(pods, json=pod("other", runtimeClassName=sandbox_name, overhead={"cpu": "1"})),
            "pods \"other\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
        )
        refused(
            client.post(pods, json=pod("conflict", runtimeClassName=sandbox_name, nodeSelector={"sandbox": "kata"})),
            'pods "conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; '
            "pod.spec.nodeSelector[sandbox] = kata",
        )
        refused(
            client.post(pods, json=pod("classless", runtimeClassName=plain_name, overhead={"cpu": "1"})),
            'pods "classless" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass '
            "defined Overhead",
        )
        assert "overhead" not in created(client, pods, pod("plain", runtimeClassName=plain_name))["spec"]
    refused(
        client.post(pods, json=pod("missing", runtimeClassName=sandbox_name)),
        f'pods "missing" is forbidden: pod rejected: RuntimeClass "{sandbox_name}" not found',
    )
    # refused when validating, after the name was generated (as upstream, whose validating plugins
    # run after BeforeCreate)
    generated = client.post(pods, json={**pod("x", overhead={"cpu": "1"}), "metadata": {"generateName": "gen-"}})
    assert generated.status_code == 403, generated.text
    assert re.fullmatch(
        r'pods "gen-[a-z0-9]{5}" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass '
        "defined Overhead",
        generated.json()["message"],
    )


def test_nodes_are_created_not_ready(client: httpx.Client, namespace: str) -> None:
    not_ready = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
    own = {"key": "dedicated", "value": "db", "effect": "NoSchedule"}
    with cluster_objects(
        client,
        NODES,
        {"metadata": {"name": f"{namespace}-bare"}},
        {"metadata": {"name": f"{namespace}-tainted"}, "spec": {"taints": [own]}},
        {"metadata": {"name": f"{namespace}-already"}, "spec": {"taints": [{**not_ready, "value": "v"}]}},
    ) as (bare, tainted, already):
        assert bare["spec"]["taints"] == [not_ready]
        assert tainted["spec"]["taints"] == [own, not_ready]
        assert already["spec"]["taints"] == [{**not_ready, "value": "v"}]  # the same key and effect: matched
        # an update may take the taint away (the node lifecycle controller does once the node is ready)
        bare["spec"]["taints"] = []
        updated = client.put(f"{NODES}/{bare['metadata']['name']}", json=bare)
        assert updated.status_code == 200, updated.text
        assert "taints" not in updated.json()["spec"]


def gone(client: httpx.Client, path: str) -> bool:
    return eventually(lambda: client.get(path).status_code == 404)


def test_claims_in_use_are_protected(client: httpx.Client, namespace: str) -> None:
    claims = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims"
    for name in ("idle", "mounted", "pending", "scratch-data", "eph-data"):
        assert created(client, claims, claim(name))["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    own = claim("own")
    own["metadata"]["finalizers"] = ["example.com/keep", "kubernetes.io/pvc-protection"]
    assert created(client, claims, own)["metadata"]["finalizers"] == own["metadata"]["finalizers"]  # not twice
    pods = f"/api/v1/namespaces/{namespace}/pods"
    uses = [{"name": "data", "persistentVolumeClaim": {"claimName": name}} for name in ("mounted", "pending")]
    created(client, pods, pod("scheduled", nodeName="node-1", volumes=uses[:1]))
    created(client, pods, pod("unscheduled", volumes=uses[1:]))  # the kubelet never sees it: not a use
    # ephemeral volumes: the claim <pod>-<volume> is the pod's only when the pod controls it
    template = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    ephemeral = [{"name": "data", "ephemeral": {"volumeClaimTemplate": template}}]
    for name in ("scratch", "eph"):
        made = created(client, pods, pod(name, nodeName="node-1", volumes=ephemeral))
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "eph", "uid": made["metadata"]["uid"], "controller": True}
    patched = client.patch(
        f"{claims}/eph-data",
        json={"metadata": {"ownerReferences": [owner]}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    for name in ("idle", "mounted", "pending", "scratch-data", "eph-data"):
        assert client.delete(f"{claims}/{name}").status_code == 200
    for name in ("idle", "pending", "scratch-data"):
        assert gone(client, f"{claims}/{name}"), name
    for name in ("mounted", "eph-data"):  # in use: kept, terminating
        assert "deletionTimestamp" in client.get(f"{claims}/{name}").json()["metadata"]
    for name in ("scheduled", "eph"):
        assert client.delete(f"{pods}/{name}?gracePeriodSeconds=0").status_code == 200
    assert gone(client, f"{claims}/mounted") and gone(client, f"{claims}/eph-data")
    client.patch(
        f"{claims}/own",
        json={"metadata": {"finalizers": None}},
        headers={"Content-Type": "application/merge-patch+json"},
    )


def test_bound_volumes_are_protected(client: httpx.Client, namespace: str) -> None:
    volumes = "/api/v1/persistentvolumes"
    spec = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}
    free, bound = f"{namespace}-free", f"{namespace}-bound"
    for name in (free, bound):
        made = created(client, volumes, {"metadata": {"name": name}, "spec": spec})
        assert made["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    current = client.get(f"{volumes}/{bound}").json()
    current["status"] = {"phase": "Bound"}
    assert client.put(f"{volumes}/{bound}/status", json=current).status_code == 200
    try:
        for name in (free, bound):
            assert client.delete(f"{volumes}/{name}").status_code == 200
        assert gone(client, f"{volumes}/{free}")
        assert "deletionTimestamp" in client.get(f"{volumes}/{bound}").json()["metadata"]
        current = client.get(f"{volumes}/{bound}").json()
        current["status"] = {"phase": "Released"}
        assert client.put(f"{volumes}/{bound}/status", json=current).status_code == 200
        assert gone(client, f"{volumes}/{bound}")
    finally:
        for name in (free, bound):
            client.patch(
                f"{volumes}/{name}",
                json={"metadata": {"finalizers": None}},
                headers={"Content-Type": "application/merge-patch+json"},
            )
            client.delete(f"{volumes}/{name}")


def test_a_namespace_with_claims_goes(client: httpx.Client) -> None:
    """The namespace controller deletes the claims; the pvc-protection controller releases them."""
    name = f"claims-{time.monotonic_ns()}"
    assert client.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    created(client, f"/api/v1/namespaces/{name}/persistentvolumeclaims", claim("data"))
    assert client.delete(f"/api/v1/namespaces/{name}").status_code == 200
    assert gone(client, f"/api/v1/namespaces/{name}")


def test_the_controllers_protect_what_was_made_without_the_plugin(tmp_path: Path) -> None:
    process = GatewayProcess(tmp_path, "--disable-admission-plugins=StorageObjectInUseProtection").start()
    try:
        with process.client() as client:
            made = created(client, "/api/v1/namespaces/default/persistentvolumeclaims", claim("late"))
            assert "finalizers" not in made["metadata"]
            path = "/api/v1/namespaces/default/persistentvolumeclaims/late"
            assert eventually(lambda: client.get(path).json()["metadata"].get("finalizers")) == [
                "kubernetes.io/pvc-protection"
            ]
            assert client.delete(path).status_code == 200
            assert gone(client, path)
    finally:
        process.kill()
