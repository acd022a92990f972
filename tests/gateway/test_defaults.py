"""Upstream's defaults, against a real server: each kind created with a minimal object (over HTTP or
with kubectl's generators), then read back whole and compared with the object a Kubernetes 1.32
cluster returns for the same request, written out here from upstream's defaults.go functions,
``+default`` markers, strategies and admission plugins (ServiceAccount, DefaultTolerationSeconds,
Priority).

Only the values the server makes up are left out of the comparison: uid, resourceVersion,
creationTimestamp and managedFields (checked present); the uid is filled in where objects repeat it
(a Job's generated labels and selector). metadata.generation, which each kind's strategy decides,
is compared where these tests know upstream's (the workloads; none on Pods, Services, Namespaces,
PersistentVolumes and claims).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from .helpers import Kubectl

SYSTEM_SET = ("uid", "resourceVersion", "creationTimestamp", "managedFields")
UNCHECKED = ("generation",)  # the cluster-scoped and other kinds of test_*_kinds
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
NO_TIMESTAMP = {"creationTimestamp": None}  # an embedded template's metadata, as Go encodes it

DEFAULT_TOLERATIONS = [
    {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
]
DEFAULTED_CONTAINER = {
    "resources": {},
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
}
TEMPLATE_SPEC = {
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "dnsPolicy": "ClusterFirst",
    "securityContext": {},
    "schedulerName": "default-scheduler",
}


def stable(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` without what the server makes up (which must be there)."""
    meta = obj["metadata"]
    assert meta["uid"] and meta["resourceVersion"] and TIMESTAMP.match(meta["creationTimestamp"]), meta
    assert meta["managedFields"], meta
    return {**obj, "metadata": {k: v for k, v in meta.items() if k not in SYSTEM_SET}}


def without_generation(obj: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k not in UNCHECKED}}


# Kinds whose status a controller in the server writes (APF's Dangling condition).
CONTROLLED_STATUS = ("FlowSchema", "CustomResourceDefinition", "ValidatingAdmissionPolicy")


def created(client: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(path, json=body)
    assert response.status_code == 201, response.text
    name = body["metadata"]["name"]
    read = client.get(f"{path}/{name}")
    assert read.status_code == 200, read.text
    got = read.json()
    if got["kind"] in CONTROLLED_STATUS:  # the kind's controller may have written its status since
        return {**got, "status": {}}
    assert got == response.json()  # what the create answered is what is stored
    return got


def pod_template(container: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"containers": [{**container, **DEFAULTED_CONTAINER}], **TEMPLATE_SPEC, **spec}


# ---- core ----------------------------------------------------------------------------------------
def test_pod(client: httpx.Client, namespace: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web"},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "registry.k8s.io/nginx:1.27",
                    "ports": [{"containerPort": 80}],
                    "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                    "readinessProbe": {"httpGet": {"port": 80}},
                    "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                    "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
                },
                {"name": "sidecar", "image": "busybox", "command": ["sleep", "3600"]},
            ],
            "volumes": [
                {"name": "cache"},
                {"name": "config", "configMap": {"name": "cfg"}},
                {"name": "creds", "secret": {"secretName": "creds"}},
                {
                    "name": "info",
                    "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]},
                },
                {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
                {"name": "host", "hostPath": {"path": "/var/log"}},
            ],
        },
    }
    got = created(client, f"/api/v1/namespaces/{namespace}/pods", body)
    token = got["spec"]["volumes"][-1]["name"]  # the ServiceAccount plugin's, its suffix random
    assert re.fullmatch("kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", token), token
    token_mount = {"name": token, "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
    assert stable(got) == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "volumes": [
                {"name": "cache", "emptyDir": {}},
                {"name": "config", "configMap": {"name": "cfg", "defaultMode": 420}},
                {"name": "creds", "secret": {"secretName": "creds", "defaultMode": 420}},
                {
                    "name": "info",
                    "downwardAPI": {
                        "items": [{"path": "labels", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"}}],
                        "defaultMode": 420,
                    },
                },
                {
                    "name": "token",
                    "projected": {
                        "sources": [{"serviceAccountToken": {"expirationSeconds": 3600, "path": "token"}}],
                        "defaultMode": 420,
                    },
                },
                {"name": "host", "hostPath": {"path": "/var/log", "type": ""}},
                {
                    "name": token,
                    "projected": {
                        "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                            {
                                "downwardAPI": {
                                    "items": [
                                        {
                                            "path": "namespace",
                                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                        }
                                    ]
                                }
                            },
                        ],
                        "defaultMode": 420,
                    },
                },
            ],
            "containers": [
                {
                    "name": "app",
                    "image": "registry.k8s.io/nginx:1.27",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "env": [
                        {"name": "NODE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}
                    ],
                    "resources": {
                        "limits": {"cpu": "500m", "memory": "128Mi"},
                        "requests": {"cpu": "500m", "memory": "128Mi"},
                    },
                    "volumeMounts": [{"name": "cache", "mountPath": "/cache"}, token_mount],
                    "readinessProbe": {
                        "httpGet": {"path": "/", "port": 80, "scheme": "HTTP"},
                        "timeoutSeconds": 1,
                        "periodSeconds": 10,
                        "successThreshold": 1,
                        "failureThreshold": 3,
                    },
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                },
                {
                    "name": "sidecar",
                    "image": "busybox",
                    "command": ["sleep", "3600"],
                    "resources": {},
                    "volumeMounts": [token_mount],
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "Always",
                },
            ],
            **TEMPLATE_SPEC,
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "tolerations": DEFAULT_TOLERATIONS,
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("localhost:5000/team/app", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
        ("nginx:latest@sha256:" + "a" * 64, "Always"),
    ],
)
def test_image_pull_policy_follows_the_tag(client: httpx.Client, namespace: str, image: str, policy: str) -> None:
    body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": image}]}}
    got = created(client, f"/api/v1/namespaces/{namespace}/pods", body)
    assert got["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_pod_tolerations_and_priority_from_admission(client: httpx.Client, namespace: str) -> None:
    """A toleration of every NoExecute taint stands for both defaults; a PriorityClass gives the
    pod its value and policy; an unknown class or a priority of its own is refused."""
    body = {
        "metadata": {"name": "critical"},
        "spec": {
            "containers": [{"name": "c", "image": "busybox:1.36"}],
            "tolerations": [{"operator": "Exists", "effect": "NoExecute"}],
            "priorityClassName": "system-node-critical",
        },
    }
    got = created(client, f"/api/v1/namespaces/{namespace}/pods", body)
    spec = got["spec"]
    assert spec["tolerations"] == [{"operator": "Exists", "effect": "NoExecute"}]
    assert (spec["priority"], spec["preemptionPolicy"]) == (2000001000, "PreemptLowerPriority")

    unknown = client.post(
        f"/api/v1/namespaces/{namespace}/pods",
        json={
            "metadata": {"name": "x"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "priorityClassName": "nope"},
        },
    )
    assert unknown.status_code == 403, unknown.text
    assert unknown.json()["message"] == 'pods "x" is forbidden: no PriorityClass with name nope was found'
    own = client.post(
        f"/api/v1/namespaces/{namespace}/pods",
        json={"metadata": {"name": "y"}, "spec": {"containers": [{"name": "c", "image": "i"}], "priority": 5}},
    )
    assert own.status_code == 403, own.text
    assert own.json()["message"] == (
        'pods "y" is forbidden: the integer value of priority (5) must not be provided in pod spec; '
        "priority admission controller computed 0 from the given PriorityClass name"
    )


def test_a_global_default_priority_class_names_pods_without_one(client: httpx.Client, namespace: str) -> None:
    pc = {
        "metadata": {"name": f"{namespace}-default"},
        "value": 1000,
        "globalDefault": True,
        "preemptionPolicy": "Never",
    }
    assert client.post("/apis/scheduling.k8s.io/v1/priorityclasses", json=pc).status_code == 201
    try:
        body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
        spec = created(client, f"/api/v1/namespaces/{namespace}/pods", body)["spec"]
        assert (spec["priorityClassName"], spec["priority"], spec["preemptionPolicy"]) == (
            pc["metadata"]["name"],
            1000,
            "Never",
        )
    finally:
        client.delete(f"/apis/scheduling.k8s.io/v1/priorityclasses/{pc['metadata']['name']}")


def test_secret_configmap_namespace_and_replication_controller(client: httpx.Client, namespace: str) -> None:
    secret = created(client, f"/api/v1/namespaces/{namespace}/secrets", {"metadata": {"name": "s"}})
    assert stable(secret) == {
        "kind": "Secret",
        "apiVersion": "v1",
        "metadata": {"name": "s", "namespace": namespace},
        "type": "Opaque",
    }
    ns = created(client, "/api/v1/namespaces", {"metadata": {"name": f"{namespace}-x"}})
    assert stable(ns) == {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": f"{namespace}-x", "labels": {"kubernetes.io/metadata.name": f"{namespace}-x"}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }
    generated = client.post("/api/v1/namespaces", json={"metadata": {"generateName": f"{namespace}-g-"}})
    assert generated.status_code == 201, generated.text
    name = generated.json()["metadata"]["name"]
    assert generated.json()["metadata"]["labels"] == {"kubernetes.io/metadata.name": name}
    for made in (f"{namespace}-x", name):
        client.delete(f"/api/v1/namespaces/{made}")

    rc = {
        "metadata": {"name": "rc"},
        "spec": {
            "template": {"metadata": {"labels": {"app": "rc"}}, "spec": {"containers": [{"name": "c", "image": "i:1"}]}}
        },
    }
    got = created(client, f"/api/v1/namespaces/{namespace}/replicationcontrollers", rc)
    assert stable(got) == {
        "kind": "ReplicationController",
        "apiVersion": "v1",
        "metadata": {"name": "rc", "namespace": namespace, "labels": {"app": "rc"}, "generation": 1},
        "spec": {
            "replicas": 1,
            "selector": {"app": "rc"},
            "template": {
                "metadata": {**NO_TIMESTAMP, "labels": {"app": "rc"}},
                "spec": pod_template({"name": "c", "image": "i:1", "imagePullPolicy": "IfNotPresent"}),
            },
        },
        "status": {"replicas": 0},
    }


def test_persistent_volumes_and_claims(client: httpx.Client, namespace: str) -> None:
    pvc = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    got = created(client, f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", pvc)
    assert stable(got) == {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        # StorageObjectInUseProtection's finalizer (on by default upstream too)
        "metadata": {"name": "data", "namespace": namespace, "finalizers": ["kubernetes.io/pvc-protection"]},
        "spec": {**pvc["spec"], "volumeMode": "Filesystem"},
        "status": {"phase": "Pending"},
    }
    pv = {
        "metadata": {"name": f"{namespace}-pv"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}},
    }
    got = created(client, "/api/v1/persistentvolumes", pv)
    client.delete(f"/api/v1/persistentvolumes/{namespace}-pv")
    assert stable(got) == {
        "kind": "PersistentVolume",
        "apiVersion": "v1",
        "metadata": {"name": f"{namespace}-pv", "finalizers": ["kubernetes.io/pv-protection"]},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "hostPath": {"path": "/data", "type": ""},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Pending"},
    }


def test_limit_range_and_endpoints(client: httpx.Client, namespace: str) -> None:
    limits = {
        "metadata": {"name": "l"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "0.5Mi"}}]},
    }
    got = created(client, f"/api/v1/namespaces/{namespace}/limitranges", limits)
    assert got["spec"] == {
        "limits": [
            {
                "type": "Container",
                "max": {"cpu": "2"},
                "min": {"memory": "512Ki"},
                "default": {"cpu": "2"},
                "defaultRequest": {"cpu": "2", "memory": "512Ki"},
            }
        ]
    }
    endpoints = {"metadata": {"name": "e"}, "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80}]}]}
    got = created(client, f"/api/v1/namespaces/{namespace}/endpoints", endpoints)
    assert got["subsets"] == [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80, "protocol": "TCP"}]}]


# ---- apps and batch, with kubectl's generators ---------------------------------------------------------
def test_kubectl_create_deployment(kubectl: Kubectl, client: httpx.Client, namespace: str) -> None:
    kubectl.run("create", "deployment", "web", "--image=nginx", "-n", namespace)
    got = client.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/web").json()
    assert stable(got) == {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"name": "web", "namespace": namespace, "labels": {"app": "web"}, "generation": 1},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {**NO_TIMESTAMP, "labels": {"app": "web"}},
                "spec": pod_template({"name": "nginx", "image": "nginx", "imagePullPolicy": "Always"}),
            },
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
        },
        "status": {},
    }


def test_kubectl_create_job_and_cronjob(kubectl: Kubectl, client: httpx.Client, namespace: str) -> None:
    kubectl.run("create", "job", "once", "--image=busybox:1.36", "-n", namespace)
    got = client.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/once").json()
    uid = got["metadata"]["uid"]
    generated = {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "once",
        "controller-uid": uid,
        "job-name": "once",
    }
    assert stable(got) == {
        "kind": "Job",
        "apiVersion": "batch/v1",
        "metadata": {"name": "once", "namespace": namespace, "labels": generated, "generation": 1},
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "backoffLimit": 6,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}},
            "manualSelector": False,
            "template": {
                "metadata": {**NO_TIMESTAMP, "labels": generated},
                "spec": pod_template(
                    {"name": "once", "image": "busybox:1.36", "imagePullPolicy": "IfNotPresent"}, restartPolicy="Never"
                ),
            },
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
        },
        "status": {},
    }
    kubectl.run("create", "cronjob", "nightly", "--image=busybox", "--schedule=0 2 * * *", "-n", namespace)
    got = client.get(f"/apis/batch/v1/namespaces/{namespace}/cronjobs/nightly").json()
    assert stable(got) == {
        "kind": "CronJob",
        "apiVersion": "batch/v1",
        "metadata": {"name": "nightly", "namespace": namespace, "generation": 1},
        "spec": {
            "schedule": "0 2 * * *",
            "concurrencyPolicy": "Allow",
            "suspend": False,
            "jobTemplate": {
                "metadata": {**NO_TIMESTAMP, "name": "nightly"},
                "spec": {
                    "template": {
                        "metadata": NO_TIMESTAMP,
                        "spec": pod_template(
                            {"name": "nightly", "image": "busybox", "imagePullPolicy": "Always"},
                            restartPolicy="OnFailure",
                        ),
                    }
                },
            },
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 1,
        },
        "status": {},
    }


def test_job_with_a_manual_selector_and_a_pod_failure_policy(client: httpx.Client, namespace: str) -> None:
    body = {
        "metadata": {"name": "manual"},
        "spec": {
            "manualSelector": True,
            "selector": {"matchLabels": {"app": "m"}},
            "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
            "template": {
                "metadata": {"labels": {"app": "m"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]},
            },
        },
    }
    got = created(client, f"/apis/batch/v1/namespaces/{namespace}/jobs", body)
    assert got["metadata"]["labels"] == {"app": "m"}
    spec = got["spec"]
    assert spec["selector"] == {"matchLabels": {"app": "m"}}
    assert spec["template"]["metadata"]["labels"] == {"app": "m"}
    assert spec["podReplacementPolicy"] == "Failed"
    assert spec["podFailurePolicy"]["rules"][0]["onPodConditions"] == [{"type": "DisruptionTarget", "status": "True"}]


TEMPLATE = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}
DEFAULTED_TEMPLATE = {
    "metadata": {**NO_TIMESTAMP, "labels": {"app": "a"}},
    "spec": pod_template({"name": "c", "image": "busybox:1.36", "imagePullPolicy": "IfNotPresent"}),
}
SELECTOR = {"matchLabels": {"app": "a"}}
EMPTY_STATUS = {  # the status fields without omitempty
    "ReplicaSet": {"replicas": 0},
    "StatefulSet": {"replicas": 0, "availableReplicas": 0},
    "DaemonSet": {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0},
}


@pytest.mark.parametrize(
    ("plural", "kind", "extra", "spec"),
    [
        ("replicasets", "ReplicaSet", {}, {"replicas": 1, "selector": SELECTOR, "template": DEFAULTED_TEMPLATE}),
        (
            "statefulsets",
            "StatefulSet",
            {"serviceName": "a"},
            {
                "replicas": 1,
                "selector": SELECTOR,
                "template": DEFAULTED_TEMPLATE,
                "serviceName": "a",
                "podManagementPolicy": "OrderedReady",
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                "revisionHistoryLimit": 10,
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
            },
        ),
        (
            "daemonsets",
            "DaemonSet",
            {},
            {
                "selector": SELECTOR,
                "template": DEFAULTED_TEMPLATE,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                "revisionHistoryLimit": 10,
            },
        ),
    ],
)
def test_apps_workloads(
    client: httpx.Client, namespace: str, plural: str, kind: str, extra: dict[str, Any], spec: dict[str, Any]
) -> None:
    body = {"metadata": {"name": "a"}, "spec": {"selector": SELECTOR, "template": TEMPLATE, **extra}}
    got = created(client, f"/apis/apps/v1/namespaces/{namespace}/{plural}", body)
    metadata: dict[str, Any] = {"name": "a", "namespace": namespace, "generation": 1}
    if kind == "DaemonSet":  # its template generation, as apps/v1 carries it
        metadata["annotations"] = {"deprecated.daemonset.template.generation": "1"}
    assert stable(got) == {
        "kind": kind,
        "apiVersion": "apps/v1",
        "metadata": metadata,
        "spec": spec,
        "status": EMPTY_STATUS[kind],
    }


# ---- the other groups ----------------------------------------------------------------------------
Expect = Callable[[str], dict[str, Any]]  # the object expected, from the namespace's name

# A rule a ValidatingAdmissionPolicy must name (upstream's validation); scope defaults to "*".
RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
CLUSTER_CASES: list[tuple[str, str, dict[str, Any], Any]] = [
    (
        "/apis/storage.k8s.io/v1/storageclasses",
        "StorageClass",
        {"provisioner": "example.com/disk"},
        {"provisioner": "example.com/disk", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"},
    ),
    (
        "/apis/storage.k8s.io/v1/csidrivers",
        "CSIDriver",
        {"spec": {}},
        {
            "spec": {
                "attachRequired": True,
                "podInfoOnMount": False,
                "volumeLifecycleModes": ["Persistent"],
                "storageCapacity": False,
                "fsGroupPolicy": "ReadWriteOnceWithFSType",
                "requiresRepublish": False,
                "seLinuxMount": False,
            }
        },
    ),
    (
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        "PriorityClass",
        {"value": 10},
        {"value": 10, "preemptionPolicy": "PreemptLowerPriority"},
    ),
    (
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        "ClusterRoleBinding",
        {
            "subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "sa", "namespace": "x"}],
            "roleRef": {"kind": "ClusterRole", "name": "view"},
        },
        {
            "subjects": [
                {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "u"},
                {"kind": "ServiceAccount", "name": "sa", "namespace": "x"},
            ],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        },
    ),
    (
        "/apis/networking.k8s.io/v1/ingressclasses",
        "IngressClass",
        {"spec": {"controller": "example.com/ingress", "parameters": {"kind": "Params", "name": "p"}}},
        {
            "spec": {
                "controller": "example.com/ingress",
                "parameters": {"kind": "Params", "name": "p", "scope": "Cluster"},
            }
        },
    ),
    (
        "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
        "FlowSchema",
        {"spec": {"priorityLevelConfiguration": {"name": "workload-low"}}},
        {"spec": {"priorityLevelConfiguration": {"name": "workload-low"}, "matchingPrecedence": 1000}, "status": {}},
    ),
    (
        "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
        "PriorityLevelConfiguration",
        {"spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}},
        {
            "spec": {
                "type": "Limited",
                "limited": {
                    "nominalConcurrencyShares": 30,
                    "limitResponse": {
                        "type": "Queue",
                        "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50},
                    },
                    "lendablePercent": 0,
                },
            },
            "status": {},
        },
    ),
    (
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        {
            "webhooks": [
                {
                    "name": "v.example.com",
                    "clientConfig": {"service": {"namespace": "ns", "name": "hook"}},
                    "rules": [
                        {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}
                    ],
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                }
            ]
        },
        {
            "webhooks": [
                {
                    "name": "v.example.com",
                    "clientConfig": {"service": {"namespace": "ns", "name": "hook", "port": 443}},
                    "rules": [
                        {
                            "operations": ["CREATE"],
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "resources": ["pods"],
                            "scope": "*",
                        }
                    ],
                    "failurePolicy": "Fail",
                    "matchPolicy": "Equivalent",
                    "namespaceSelector": {},
                    "objectSelector": {},
                    "sideEffects": "None",
                    "timeoutSeconds": 10,
                    "admissionReviewVersions": ["v1"],
                }
            ]
        },
    ),
    (
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        {
            "webhooks": [
                {
                    "name": "m.example.com",
                    "clientConfig": {"url": "https://hook.example.com/"},
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                }
            ]
        },
        {
            "webhooks": [
                {
                    "name": "m.example.com",
                    "clientConfig": {"url": "https://hook.example.com/"},
                    "failurePolicy": "Fail",
                    "matchPolicy": "Equivalent",
                    "namespaceSelector": {},
                    "objectSelector": {},
                    "sideEffects": "None",
                    "timeoutSeconds": 10,
                    "admissionReviewVersions": ["v1"],
                    "reinvocationPolicy": "Never",
                }
            ]
        },
    ),
    (
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
        "ValidatingAdmissionPolicy",
        {"spec": {"matchConstraints": {"resourceRules": [RULE]}, "validations": [{"expression": "true"}]}},
        {
            "spec": {
                "matchConstraints": {
                    "resourceRules": [{**RULE, "scope": "*"}],
                    "namespaceSelector": {},
                    "objectSelector": {},
                    "matchPolicy": "Equivalent",
                },
                "validations": [{"expression": "true"}],
                "failurePolicy": "Fail",
            },
            "status": {},
        },
    ),
]


@pytest.mark.parametrize(("path", "kind", "body", "expected"), CLUSTER_CASES, ids=[c[1] for c in CLUSTER_CASES])
def test_cluster_scoped_kinds(
    client: httpx.Client, namespace: str, path: str, kind: str, body: dict[str, Any], expected: dict[str, Any]
) -> None:
    name = f"{namespace}-{kind.lower()}"
    got = created(client, path, {"metadata": {"name": name}, **body})
    client.delete(f"{path}/{name}")
    group_version = path.removeprefix("/apis/").rsplit("/", 1)[0]
    assert without_generation(stable(got)) == {
        "kind": kind,
        "apiVersion": group_version,
        "metadata": {"name": name},
        **expected,
    }


NAMESPACED_CASES: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    (
        "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies",
        "NetworkPolicy",
        {"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}},
        {
            "spec": {
                "podSelector": {},
                "egress": [{"ports": [{"protocol": "TCP", "port": 53}]}],
                "policyTypes": ["Ingress", "Egress"],
            }
        },
    ),
    (
        "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
        "RoleBinding",
        {"subjects": [{"kind": "Group", "name": "g"}], "roleRef": {"kind": "Role", "name": "r"}},
        {
            "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "g"}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        },
    ),
    (
        "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        {"spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5}},
        {
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1,
                "maxReplicas": 5,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
                    }
                ],
            },
            "status": {"desiredReplicas": 0, "currentMetrics": None},
        },
    ),
    (
        "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        {
            "spec": {
                "scaleTargetRef": {"kind": "Deployment", "name": "web"},
                "maxReplicas": 5,
                "metrics": [
                    {
                        "type": "Pods",
                        "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}},
                    }
                ],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
            }
        },
        {
            "spec": {
                "scaleTargetRef": {"kind": "Deployment", "name": "web"},
                "minReplicas": 1,
                "maxReplicas": 5,
                "metrics": [
                    {
                        "type": "Pods",
                        "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}},
                    }
                ],
                "behavior": {
                    "scaleUp": {
                        "stabilizationWindowSeconds": 0,
                        "selectPolicy": "Max",
                        "policies": [
                            {"type": "Pods", "value": 4, "periodSeconds": 15},
                            {"type": "Percent", "value": 100, "periodSeconds": 15},
                        ],
                    },
                    "scaleDown": {
                        "stabilizationWindowSeconds": 60,
                        "selectPolicy": "Max",
                        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
                    },
                },
            },
            "status": {"desiredReplicas": 0, "currentMetrics": None},
        },
    ),
    (
        "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
        "EndpointSlice",
        {"addressType": "IPv4", "endpoints": [{"addresses": ["10.1.2.3"]}], "ports": [{"port": 80}]},
        {
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.1.2.3"], "conditions": {}}],
            "ports": [{"name": "", "protocol": "TCP", "port": 80}],
        },
    ),
]


@pytest.mark.parametrize(
    ("path", "kind", "body", "expected"),
    NAMESPACED_CASES,
    ids=[f"{c[1]}-{i}" for i, c in enumerate(NAMESPACED_CASES)],
)
def test_namespaced_kinds(
    client: httpx.Client, namespace: str, path: str, kind: str, body: dict[str, Any], expected: dict[str, Any]
) -> None:
    collection = path.format(ns=namespace)
    got = created(client, collection, {"metadata": {"name": "x"}, **body})
    group_version = collection.removeprefix("/apis/").split("/namespaces/")[0]
    assert without_generation(stable(got)) == {
        "kind": kind,
        "apiVersion": group_version,
        "metadata": {"name": "x", "namespace": namespace},
        **expected,
    }


def test_custom_resource_definition(client: httpx.Client, namespace: str) -> None:
    group = f"{namespace}.example.com"
    body = {
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}
            ],
        },
    }
    got = created(client, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body)
    stored = client.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}").json()
    client.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")
    spec = got["spec"]
    assert spec["scope"] == "Namespaced"
    assert spec["names"] == {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"}
    assert spec["conversion"] == {"strategy": "None"}
    assert stored["status"]["storedVersions"] == ["v1"]


def test_defaults_apply_on_update_and_patch(client: httpx.Client, namespace: str) -> None:
    """A replace or patch that leaves a defaulted field out gets it again, as on create."""
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    body = {"metadata": {"name": "d"}, "spec": {"selector": SELECTOR, "template": TEMPLATE}}
    created(client, path, body)
    replaced = client.put(f"{path}/d", json={**body, "spec": {**body["spec"], "strategy": {"type": "Recreate"}}})
    assert replaced.status_code == 200, replaced.text
    spec = replaced.json()["spec"]
    assert spec["strategy"] == {"type": "Recreate"}
    assert (spec["replicas"], spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (1, 10, 600)
    patched = client.patch(
        f"{path}/d",
        json={"spec": {"strategy": {"type": "RollingUpdate"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
