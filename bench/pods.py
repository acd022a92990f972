"""Realistic pods (about 2 KiB of JSON each) and loading many of them straight into storage.

Creating 100,000 pods through HTTP would take longer than the benchmark itself, so they are written
as storage holds them — the enveloped protobuf of a ``k8s.io.api.core.v1.Pod``, resourceVersion empty,
Go-normalized, under ``/registry/pods/<namespace>/<name>`` — with batched etcd Txn calls. A gateway
started afterwards loads them into its watch cache as it would any stored pods.

Each pod is owned by one of 50 ReplicaSets, stored with the first 50 pods: a pod whose owner does not
exist is garbage, and the gateway's garbage collector would mark every one deleting (an update per
pod, while the benchmark measures).
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import Iterator

import grpc
from google.protobuf.message import Message

from bench.common import GRPC_OPTIONS
from protokube.gen.etcdserverpb import rpc_pb2 as pb
from protokube.gen.etcdserverpb import rpc_pb2_grpc
from protokube.schema import envelope, goshape, jsondecode

POD = "k8s.io.api.core.v1.Pod"
REPLICA_SET = "k8s.io.api.apps.v1.ReplicaSet"
APPS = 50  # pod i belongs to app-(i % 50), owned by its ReplicaSet app-(i % 50)-7d9c6b5f4
TXN_OPS = 100  # puts per transaction (etcd's default --max-txn-ops is 128)


def pod_dict(i: int, namespace: str = "default") -> dict:
    """The JSON of a running two-container pod of a deployment, as a kubelet would have reported it."""
    app = f"app-{i % APPS}"
    name = f"{app}-7d9c6b5f4-{i:06d}"
    ip = f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"
    started = "2025-01-15T10:00:00Z"

    app_container = {
        "name": "app",
        "image": "nginx:1.27.3",
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "env": [
            {"name": "LOG_LEVEL", "value": "info"},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
        ],
        "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": True}],
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
    }
    sidecar = {
        "name": "sidecar",
        "image": "envoy:v1.32.1",
        "env": [{"name": "APP_NAME", "value": app}],
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
        "imagePullPolicy": "IfNotPresent",
    }

    def status(cname: str, image: str) -> dict:
        return {
            "name": cname,
            "state": {"running": {"startedAt": started}},
            "ready": True,
            "restartCount": 0,
            "image": image,
            "containerID": f"containerd://{uuid.UUID(int=i * 2 + len(cname)).hex * 2}",
            "started": True,
        }

    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": f"{app}-7d9c6b5f4-",
            "namespace": namespace,
            "uid": str(uuid.UUID(int=i + 1)),
            "creationTimestamp": started,
            "labels": {"app": app, "pod-template-hash": "7d9c6b5f4", "tier": ("web", "api", "worker")[i % 3]},
            "annotations": {"prometheus.io/scrape": "true"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{app}-7d9c6b5f4",
                    "uid": _owner_uid(i % APPS),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "volumes": [{"name": "config", "configMap": {"name": f"{app}-config", "defaultMode": 420}}],
            "containers": [app_container, sidecar],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "nodeName": f"node-{i % 100:03d}",
            "schedulerName": "default-scheduler",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": kind, "status": "True", "lastTransitionTime": started}
                for kind in ("Initialized", "Ready", "PodScheduled")
            ],
            "hostIP": f"192.168.{(i // 100) % 250}.{i % 100 + 1}",
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": started,
            "containerStatuses": [status("app", "nginx:1.27.3"), status("sidecar", "envoy:v1.32.1")],
            "qosClass": "Burstable",
        },
    }


def _owner_uid(app: int) -> str:
    return str(uuid.UUID(int=app + 10**9))


def replica_set_dict(app: int, namespace: str = "default") -> dict:
    """The ReplicaSet that owns the pods of app-``app`` (they name it, and its uid, as their owner)."""
    labels = {"app": f"app-{app}", "pod-template-hash": "7d9c6b5f4"}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"app-{app}-7d9c6b5f4",
            "namespace": namespace,
            "uid": _owner_uid(app),
            "creationTimestamp": "2025-01-15T09:59:00Z",
            "labels": labels,
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod_dict(app, namespace)["spec"]},
        },
    }


def stored_replica_sets(first: int, count: int, namespace: str = "default") -> Iterator[tuple[bytes, bytes]]:
    """(key, value) of the ReplicaSets that pods ``first`` .. ``first+count-1`` are the first pods of."""
    for app in range(first, min(first + count, APPS)):
        message = jsondecode.decode(replica_set_dict(app, namespace), REPLICA_SET).message
        key = f"/registry/replicasets/{namespace}/{message.metadata.name}".encode()
        yield key, envelope.encode(goshape.normalize(message), "apps/v1", "ReplicaSet")


def pod_message(i: int, namespace: str = "default") -> Message:
    """The pod as a normalized protobuf message (resourceVersion empty, as stored)."""
    return jsondecode.decode(pod_dict(i, namespace), POD).message


def stored_value(message: Message) -> bytes:
    return envelope.encode(goshape.normalize(message), "v1", "Pod")


def stored_pods(first: int, count: int, namespace: str = "default") -> Iterator[tuple[bytes, bytes]]:
    """(key, value) of pods ``first`` .. ``first+count-1``: one decoded template, names and ids changed per pod."""
    template = pod_message(0, namespace)
    for i in range(first, first + count):
        d = pod_dict(i, namespace)
        message = type(template)()
        message.CopyFrom(template)
        meta = message.metadata
        meta.name = d["metadata"]["name"]
        meta.generateName = d["metadata"]["generateName"]
        meta.uid = d["metadata"]["uid"]
        meta.labels.clear()
        meta.labels.update(d["metadata"]["labels"])
        meta.ownerReferences[0].name = d["metadata"]["ownerReferences"][0]["name"]
        meta.ownerReferences[0].uid = d["metadata"]["ownerReferences"][0]["uid"]
        message.spec.containers[1].env[0].value = d["spec"]["containers"][1]["env"][0]["value"]
        message.spec.nodeName = d["spec"]["nodeName"]
        message.spec.volumes[0].volumeSource.configMap.localObjectReference.name = f"app-{i % APPS}-config"
        message.status.podIP = d["status"]["podIP"]
        message.status.podIPs[0].ip = d["status"]["podIP"]
        message.status.hostIP = d["status"]["hostIP"]
        for status, want in zip(message.status.containerStatuses, d["status"]["containerStatuses"], strict=True):
            status.containerID = want["containerID"]
        key = f"/registry/pods/{namespace}/{meta.name}".encode()
        yield key, stored_value(message)


async def _load(address: str, first: int, count: int, namespace: str, concurrency: int) -> int:
    items = itertools.chain(stored_replica_sets(first, count, namespace), stored_pods(first, count, namespace))
    revision = 0
    async with grpc.aio.insecure_channel(address, options=GRPC_OPTIONS) as channel:
        kv = rpc_pb2_grpc.KVStub(channel)

        async def worker() -> None:
            nonlocal revision
            while True:
                batch = [pb.RequestOp(request_put=pb.PutRequest(key=k, value=v)) for k, v in _take(items, TXN_OPS)]
                if not batch:
                    return
                response = await kv.Txn(pb.TxnRequest(success=batch), timeout=60)
                revision = max(revision, response.header.revision)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return revision


def _take(items: Iterator, n: int) -> list:
    out = []
    for item in items:
        out.append(item)
        if len(out) == n:
            break
    return out


def load_pods(address: str, first: int, count: int, namespace: str = "default", concurrency: int = 4) -> int:
    """Write pods ``first`` .. ``first+count-1`` (and the ReplicaSets they are the first pods of) to the
    etcd-API storage at ``address``; returns the last revision."""
    return asyncio.run(_load(address, first, count, namespace, concurrency))
