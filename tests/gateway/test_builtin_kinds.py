"""Every kind Kubernetes 1.32 serves as GA, against a real server.

For each kind: one realistic object created over HTTP (JSON), read back equal, listed, read as a
Table (column names and one row's cells as upstream's printers.go would print that object, written
here by hand) and as protobuf, decoded with a decoder built from wirefacts/k8s-fields.json alone;
its etcd key checked against upstream's (test/integration/etcd/data.go). Then discovery, kubectl
by short name, ``kubectl get all`` and kubectl's create generators.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any

import grpc
import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from etcdserverpb import rpc_pb2, rpc_pb2_grpc

from protokube.schema.registry import GroupVersionKind, registry

from .helpers import GatewayProcess, Kubectl
from .wirefacts_decoder import decode_object

NS = "builtin"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
PROTOBUF = "application/vnd.kubernetes.protobuf"
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
STATUS = {"status": ["get", "patch", "update"]}
SCALE = {"scale": ["get", "patch", "update"]}
AGE = re.compile(r"^\d+s$")  # an object created moments ago
CREATED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")  # the default table's Created At
DEFAULT_COLUMNS = ["Name", "Created At"]
CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n").decode()


def _certificate_request() -> bytes:
    """A real PEM certificate request (the server checks its signature, as upstream does)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "builtin")])
    request = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    return request.public_bytes(serialization.Encoding.PEM)


CSR_PEM = _certificate_request()


@dataclass(frozen=True)
class Case:
    kind: str
    group: str
    version: str
    plural: str
    namespaced: bool
    body: dict[str, Any]  # metadata.name included; apiVersion and kind are added
    columns: list[str]
    cells: list[Any]  # AGE / CREATED stand for any age / timestamp
    wire: list[tuple[tuple[Any, ...], Any]]  # (path into the decoded protobuf object, value)
    etcd_key: str  # below /registry/
    short_names: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    verbs: list[str] = field(default_factory=lambda: list(VERBS))
    subresources: dict[str, list[str]] = field(default_factory=dict)
    status: dict[str, Any] | None = None  # written through the status subresource before the table

    @property
    def name(self) -> str:
        return self.body["metadata"]["name"]

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def collection(self) -> str:
        root = f"/apis/{self.group}/{self.version}" if self.group else "/api/v1"
        return f"{root}/namespaces/{NS}/{self.plural}" if self.namespaced else f"{root}/{self.plural}"

    def item(self) -> str:
        return f"{self.collection()}/{self.name}"

    def message(self) -> str:
        prefix = {
            "apiextensions.k8s.io": "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1",
            "apiregistration.k8s.io": "k8s.io.kube_aggregator.pkg.apis.apiregistration.v1",
        }.get(self.group)
        if prefix is None:
            group = self.group.split(".")[0] if self.group else "core"
            prefix = f"k8s.io.api.{group}.{self.version}"
        return f"{prefix}.{self.kind}"


def meta(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, **extra}


def template(name: str, image: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": name, "image": image}], **spec}}


CASES = [
    # ---- core/v1 -------------------------------------------------------------------------------
    Case(
        "LimitRange", "", "v1", "limitranges", True,
        {"metadata": meta("limits-1"), "spec": {"limits": [{
            "type": "Container",
            "default": {"cpu": "500m", "memory": "256Mi"},
            "defaultRequest": {"cpu": "250m", "memory": "128Mi"},
            "max": {"cpu": "2"},
        }]}},
        DEFAULT_COLUMNS, ["limits-1", CREATED],
        [(("spec", "limits", 0, "type"), "Container"), (("spec", "limits", 0, "default", "cpu", "string"), "500m")],
        f"limitranges/{NS}/limits-1", short_names=["limits"],
    ),
    Case(
        "PersistentVolume", "", "v1", "persistentvolumes", False,
        {"metadata": meta("bk-pv1"), "spec": {
            "capacity": {"storage": "5Gi"},
            "hostPath": {"path": "/data/pv1", "type": "DirectoryOrCreate"},
            "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
            "claimRef": {"namespace": NS, "name": "data"},
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": "standard",
            "volumeMode": "Filesystem",
        }},
        ["Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass",
         "VolumeAttributesClass", "Reason", "Age", "VolumeMode"],
        ["bk-pv1", "5Gi", "RWO,ROX", "Delete", "Pending", f"{NS}/data", "standard", "<unset>", "", AGE, "Filesystem"],
        [(("spec", "persistentVolumeSource", "hostPath", "path"), "/data/pv1"),
         (("spec", "capacity", "storage", "string"), "5Gi")],
        "persistentvolumes/bk-pv1", short_names=["pv"], subresources=STATUS,
    ),
    Case(
        "PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", True,
        {"metadata": meta("data"), "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "5Gi"}},
            "volumeName": "bk-pv1",
            "storageClassName": "standard",
            "volumeMode": "Filesystem",
        }},
        ["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age",
         "VolumeMode"],
        ["data", "Bound", "bk-pv1", "5Gi", "RWO", "standard", "<unset>", AGE, "Filesystem"],
        [(("spec", "volumeName"), "bk-pv1"), (("status", "phase"), "Bound")],
        f"persistentvolumeclaims/{NS}/data", short_names=["pvc"], subresources=STATUS,
        status={"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "5Gi"}},
    ),
    Case(
        "PodTemplate", "", "v1", "podtemplates", True,
        {"metadata": meta("web-template"), "template": {
            "metadata": {"labels": {"app": "web", "tier": "front"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}, {"name": "sidecar", "image": "busybox"}]},
        }},
        ["Name", "Containers", "Images", "Pod Labels"],
        ["web-template", "web,sidecar", "nginx:1.27,busybox", "app=web,tier=front"],
        [(("template", "spec", "containers", 1, "image"), "busybox")],
        f"podtemplates/{NS}/web-template",
    ),
    Case(
        "ReplicationController", "", "v1", "replicationcontrollers", True,
        {"metadata": meta("web-rc"), "spec": {
            "replicas": 3, "selector": {"app": "web-rc"}, "template": template("web-rc", "nginx:1.27"),
        }},
        ["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"],
        ["web-rc", 3, 3, 2, AGE, "web-rc", "nginx:1.27", "app=web-rc"],
        [(("spec", "replicas"), 3), (("status", "readyReplicas"), 2)],
        f"controllers/{NS}/web-rc", short_names=["rc"], categories=["all"], subresources={**STATUS, **SCALE},
        status={"replicas": 3, "readyReplicas": 2, "availableReplicas": 2, "observedGeneration": 1},
    ),
    Case(
        "ResourceQuota", "", "v1", "resourcequotas", True,
        {"metadata": meta("compute"), "spec": {"hard": {"cpu": "4", "memory": "8Gi", "limits.cpu": "8", "pods": "10"}}},
        ["Name", "Age", "Request", "Limit"],
        ["compute", AGE, "cpu: 500m/4, memory: 1Gi/8Gi, pods: 3/10", "limits.cpu: 0/8"],
        [(("spec", "hard", "limits.cpu", "string"), "8"), (("status", "used", "pods", "string"), "3")],
        f"resourcequotas/{NS}/compute", short_names=["quota"], subresources=STATUS,
        status={"hard": {"cpu": "4", "memory": "8Gi", "limits.cpu": "8", "pods": "10"},
                "used": {"cpu": "500m", "memory": "1Gi", "pods": "3"}},
    ),
    # ---- apps/v1 -------------------------------------------------------------------------------
    Case(
        "DaemonSet", "apps", "v1", "daemonsets", True,
        {"metadata": meta("node-agent"), "spec": {
            "selector": {"matchLabels": {"app": "node-agent"}},
            "template": template("node-agent", "fluent/fluent-bit:3.1", nodeSelector={"kubernetes.io/os": "linux"}),
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
        }},
        ["Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age", "Containers",
         "Images", "Selector"],
        ["node-agent", 3, 3, 2, 3, 2, "kubernetes.io/os=linux", AGE, "node-agent", "fluent/fluent-bit:3.1",
         "app=node-agent"],
        [(("spec", "updateStrategy", "rollingUpdate", "maxUnavailable", "intVal"), 1),
         (("status", "numberReady"), 2)],
        f"daemonsets/{NS}/node-agent", short_names=["ds"], categories=["all"], subresources=STATUS,
        status={"currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3, "numberReady": 2,
                "updatedNumberScheduled": 3, "numberAvailable": 2},
    ),
    Case(
        "ReplicaSet", "apps", "v1", "replicasets", True,
        {"metadata": meta("web-rs"), "spec": {
            "replicas": 2, "selector": {"matchLabels": {"app": "web-rs"}}, "template": template("web-rs", "nginx:1.27"),
        }},
        ["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"],
        ["web-rs", 2, 2, 1, AGE, "web-rs", "nginx:1.27", "app=web-rs"],
        [(("spec", "selector", "matchLabels", "app"), "web-rs")],
        f"replicasets/{NS}/web-rs", short_names=["rs"], categories=["all"], subresources={**STATUS, **SCALE},
        status={"replicas": 2, "readyReplicas": 1},
    ),
    Case(
        "StatefulSet", "apps", "v1", "statefulsets", True,
        {"metadata": meta("db"), "spec": {
            "replicas": 3,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": template("db", "postgres:16"),
            "volumeClaimTemplates": [{"metadata": {"name": "pgdata"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
        }},
        ["Name", "Ready", "Age", "Containers", "Images"],
        ["db", "1/3", AGE, "db", "postgres:16"],
        [(("spec", "serviceName"), "db"), (("spec", "volumeClaimTemplates", 0, "metadata", "name"), "pgdata")],
        f"statefulsets/{NS}/db", short_names=["sts"], categories=["all"], subresources={**STATUS, **SCALE},
        status={"replicas": 3, "readyReplicas": 1, "availableReplicas": 1},
    ),
    Case(
        "ControllerRevision", "apps", "v1", "controllerrevisions", True,
        {"metadata": meta("db-7d9f", ownerReferences=[{
            "apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
            "uid": "4c0e6a4e-3f7e-4a43-9d5e-3c1c2b5d8e01", "controller": True, "blockOwnerDeletion": True,
        }]), "data": {"spec": {"template": {"spec": {"containers": [{"name": "db", "image": "postgres:16"}]}}}},
         "revision": 2},
        ["Name", "Controller", "Revision", "Age"],
        ["db-7d9f", "statefulset.apps/db", 2, AGE],
        [(("revision",), 2), (("metadata", "ownerReferences", 0, "kind"), "StatefulSet")],
        f"controllerrevisions/{NS}/db-7d9f",
    ),
    # ---- autoscaling/v2 --------------------------------------------------------------------------
    Case(
        "HorizontalPodAutoscaler", "autoscaling", "v2", "horizontalpodautoscalers", True,
        {"metadata": meta("web-hpa"), "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2,
            "maxReplicas": 10,
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                            "averageUtilization": 70}}},
                {"type": "Pods", "pods": {"metric": {"name": "packets-per-second"},
                                          "target": {"type": "AverageValue", "averageValue": "1k"}}},
                {"type": "External", "external": {"metric": {"name": "queue_messages_ready"},
                                                  "target": {"type": "Value", "value": "30"}}},
            ],
        }},
        ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"],
        ["web-hpa", "Deployment/web", "cpu: 55%/70%, <unknown>/1k + 1 more...", "2", 10, 4, AGE],
        [(("spec", "metrics", 1, "pods", "target", "averageValue", "string"), "1k"),
         (("status", "currentReplicas"), 4)],
        f"horizontalpodautoscalers/{NS}/web-hpa", short_names=["hpa"], categories=["all"], subresources=STATUS,
        status={"currentReplicas": 4, "desiredReplicas": 4, "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 55,
                                                                         "averageValue": "110m"}}}]},
    ),
    # ---- batch/v1 ------------------------------------------------------------------------------
    Case(
        "Job", "batch", "v1", "jobs", True,
        {"metadata": meta("pi"), "spec": {
            "completions": 3, "parallelism": 2, "backoffLimit": 4,
            "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "pi", "image": "perl:5.34", "command": ["perl", "-Mbignum=bpi", "-wle", "print bpi(200)"]}]}},
        }},
        ["Name", "Status", "Completions", "Duration", "Age", "Containers", "Images", "Selector"],
        ["pi", "Complete", "3/3", "2m5s", AGE, "pi", "perl:5.34", "<none>"],
        [(("spec", "completions"), 3), (("status", "succeeded"), 3)],
        f"jobs/{NS}/pi", categories=["all"], subresources=STATUS,
        status={"startTime": "2025-01-01T10:00:00Z", "completionTime": "2025-01-01T10:02:05Z", "succeeded": 3,
                "conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": "2025-01-01T10:02:05Z"}]},
    ),
    Case(
        "CronJob", "batch", "v1", "cronjobs", True,
        {"metadata": meta("nightly"), "spec": {
            "schedule": "0 2 * * *", "timeZone": "Etc/UTC", "concurrencyPolicy": "Forbid",
            "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [
                {"name": "backup", "image": "busybox:1.36", "args": ["/bin/sh", "-c", "date"]}]}}}},
        }},
        ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age", "Containers", "Images",
         "Selector"],
        ["nightly", "0 2 * * *", "Etc/UTC", "False", 0, "<none>", AGE, "backup", "busybox:1.36", "<none>"],
        [(("spec", "schedule"), "0 2 * * *"), (("spec", "timeZone"), "Etc/UTC")],
        f"cronjobs/{NS}/nightly", short_names=["cj"], categories=["all"], subresources=STATUS,
    ),
    # ---- certificates.k8s.io/v1 ------------------------------------------------------------------
    Case(
        "CertificateSigningRequest", "certificates.k8s.io", "v1", "certificatesigningrequests", False,
        {"metadata": meta("bk-csr-1"), "spec": {
            "request": base64.b64encode(CSR_PEM).decode(),
            "signerName": "example.com/signer",
            "usages": ["client auth", "digital signature"],
            "expirationSeconds": 86400,
        }},
        ["Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"],
        ["bk-csr-1", AGE, "example.com/signer", "system:unsecured", "24h", "Pending"],
        [(("spec", "request"), CSR_PEM), (("spec", "usages"), ["client auth", "digital signature"])],
        "certificatesigningrequests/bk-csr-1", short_names=["csr"],
        subresources={"approval": ["get", "patch", "update"], **STATUS},
    ),
    # ---- discovery.k8s.io/v1 ---------------------------------------------------------------------
    Case(
        "EndpointSlice", "discovery.k8s.io", "v1", "endpointslices", True,
        {"metadata": meta("web-abc12", labels={"kubernetes.io/service-name": "web"}), "addressType": "IPv4",
         "endpoints": [
             {"addresses": ["10.0.0.5"], "conditions": {"ready": True}, "nodeName": "node-1",
              "targetRef": {"kind": "Pod", "namespace": NS, "name": "web-1"}},
             {"addresses": ["10.0.0.6"]}, {"addresses": ["10.0.0.7"]}, {"addresses": ["10.0.0.8"]},
         ],
         "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}, {"name": "metrics", "port": 9090}]},
        ["Name", "AddressType", "Ports", "Endpoints", "Age"],
        ["web-abc12", "IPv4", "8080,9090", "10.0.0.5,10.0.0.6,10.0.0.7 + 1 more...", AGE],
        [(("endpoints", 0, "targetRef", "name"), "web-1"), (("ports", 1, "port"), 9090)],
        f"endpointslices/{NS}/web-abc12",
    ),
    # ---- networking.k8s.io/v1 --------------------------------------------------------------------
    Case(
        "Ingress", "networking.k8s.io", "v1", "ingresses", True,
        {"metadata": meta("web"), "spec": {
            "ingressClassName": "nginx",
            "tls": [{"hosts": ["shop.example.com"], "secretName": "shop-tls"}],
            "rules": [
                {"host": "shop.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {
                    "service": {"name": "web", "port": {"number": 80}}}}]}},
                {"host": "api.example.com", "http": {"paths": [{"path": "/v1", "pathType": "Prefix", "backend": {
                    "service": {"name": "api", "port": {"name": "http"}}}}]}},
            ],
        }},
        ["Name", "Class", "Hosts", "Address", "Ports", "Age"],
        ["web", "nginx", "shop.example.com,api.example.com", "203.0.113.10,lb.example.com", "80, 443", AGE],
        [(("spec", "rules", 1, "ingressRuleValue", "http", "paths", 0, "backend", "service", "port", "name"), "http")],
        f"ingress/{NS}/web", short_names=["ing"], subresources=STATUS,
        status={"loadBalancer": {"ingress": [{"ip": "203.0.113.10"}, {"hostname": "lb.example.com"}]}},
    ),
    Case(
        "IngressClass", "networking.k8s.io", "v1", "ingressclasses", False,
        {"metadata": meta("bk-nginx", annotations={"ingressclass.kubernetes.io/is-default-class": "true"}),
         "spec": {"controller": "k8s.io/ingress-nginx", "parameters": {
             "apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb", "scope": "Cluster"}}},
        ["Name", "Controller", "Parameters", "Age"],
        ["bk-nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/external-lb", AGE],
        [(("spec", "parameters", "aPIGroup"), "k8s.example.com")],
        "ingressclasses/bk-nginx",
    ),
    Case(
        "NetworkPolicy", "networking.k8s.io", "v1", "networkpolicies", True,
        {"metadata": meta("allow-frontend"), "spec": {
            "podSelector": {"matchLabels": {"app": "web"}},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "frontend"}}}],
                         "ports": [{"protocol": "TCP", "port": 8080}]}],
        }},
        ["Name", "Pod-Selector", "Age"],
        ["allow-frontend", "app=web", AGE],
        [(("spec", "ingress", 0, "ports", 0, "port", "intVal"), 8080)],
        f"networkpolicies/{NS}/allow-frontend", short_names=["netpol"],
    ),
    # ---- node.k8s.io/v1 --------------------------------------------------------------------------
    Case(
        "RuntimeClass", "node.k8s.io", "v1", "runtimeclasses", False,
        {"metadata": meta("bk-gvisor"), "handler": "runsc",
         "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
         "scheduling": {"nodeSelector": {"runtime": "gvisor"}, "tolerations": [
             {"key": "runtime", "operator": "Equal", "value": "gvisor", "effect": "NoSchedule"}]}},
        ["Name", "Handler", "Age"],
        ["bk-gvisor", "runsc", AGE],
        [(("handler",), "runsc"), (("overhead", "podFixed", "memory", "string"), "120Mi")],
        "runtimeclasses/bk-gvisor",
    ),
    # ---- policy/v1 -------------------------------------------------------------------------------
    Case(
        "PodDisruptionBudget", "policy", "v1", "poddisruptionbudgets", True,
        {"metadata": meta("web-pdb"), "spec": {
            "minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}},
            "unhealthyPodEvictionPolicy": "AlwaysAllow",
        }},
        ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"],
        ["web-pdb", "50%", "N/A", 1, AGE],
        [(("spec", "minAvailable", "strVal"), "50%"), (("status", "disruptionsAllowed"), 1)],
        f"poddisruptionbudgets/{NS}/web-pdb", short_names=["pdb"], subresources=STATUS,
        status={"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 4,
                "observedGeneration": 1},
    ),
    # ---- scheduling.k8s.io/v1 --------------------------------------------------------------------
    Case(
        "PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", False,
        {"metadata": meta("bk-critical"), "value": 1000000, "globalDefault": False,
         "description": "Critical workloads", "preemptionPolicy": "Never"},
        ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"],
        ["bk-critical", 1000000, False, AGE, "Never"],
        [(("value",), 1000000), (("preemptionPolicy",), "Never")],
        "priorityclasses/bk-critical", short_names=["pc"],
    ),
    # ---- rbac.authorization.k8s.io/v1 ------------------------------------------------------------
    Case(
        "Role", "rbac.authorization.k8s.io", "v1", "roles", True,
        {"metadata": meta("pod-reader"), "rules": [
            {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list", "watch"]}]},
        DEFAULT_COLUMNS, ["pod-reader", CREATED],
        [(("rules", 0, "resources"), ["pods", "pods/log"])],
        f"roles/{NS}/pod-reader",
    ),
    Case(
        "ClusterRole", "rbac.authorization.k8s.io", "v1", "clusterroles", False,
        {"metadata": meta("bk-node-viewer"), "rules": [
            {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]},
            {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]},
        DEFAULT_COLUMNS, ["bk-node-viewer", CREATED],
        [(("rules", 1, "nonResourceURLs"), ["/healthz"])],
        "clusterroles/bk-node-viewer",
    ),
    Case(
        "RoleBinding", "rbac.authorization.k8s.io", "v1", "rolebindings", True,
        {"metadata": meta("read-pods"),
         "subjects": [
             {"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"},
             {"kind": "Group", "name": "qa", "apiGroup": "rbac.authorization.k8s.io"},
             {"kind": "ServiceAccount", "name": "builder", "namespace": NS}],
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"}},
        ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"],
        ["read-pods", "Role/pod-reader", AGE, "jane", "qa", f"{NS}/builder"],
        [(("roleRef", "name"), "pod-reader"), (("subjects", 2, "namespace"), NS)],
        f"rolebindings/{NS}/read-pods",
    ),
    Case(
        "ClusterRoleBinding", "rbac.authorization.k8s.io", "v1", "clusterrolebindings", False,
        {"metadata": meta("bk-view-nodes"),
         "subjects": [
             {"kind": "Group", "name": "ops", "apiGroup": "rbac.authorization.k8s.io"},
             {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
             {"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}],
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bk-node-viewer"}},
        ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"],
        ["bk-view-nodes", "ClusterRole/bk-node-viewer", AGE, "alice, bob", "ops", ""],
        [(("roleRef", "kind"), "ClusterRole")],
        "clusterrolebindings/bk-view-nodes",
    ),
    # ---- storage.k8s.io/v1 -----------------------------------------------------------------------
    Case(
        "StorageClass", "storage.k8s.io", "v1", "storageclasses", False,
        {"metadata": meta("bk-fast", annotations={"storageclass.kubernetes.io/is-default-class": "true"}),
         "provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3"}, "reclaimPolicy": "Retain",
         "mountOptions": ["debug"], "allowVolumeExpansion": True, "volumeBindingMode": "WaitForFirstConsumer"},
        ["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"],
        ["bk-fast (default)", "ebs.csi.aws.com", "Retain", "WaitForFirstConsumer", True, AGE],
        [(("parameters", "type"), "gp3"), (("allowVolumeExpansion",), True)],
        "storageclasses/bk-fast", short_names=["sc"],
    ),
    Case(
        "CSIDriver", "storage.k8s.io", "v1", "csidrivers", False,
        {"metadata": meta("bk.csi.example.com"), "spec": {
            "attachRequired": False, "podInfoOnMount": True, "volumeLifecycleModes": ["Persistent", "Ephemeral"],
            "storageCapacity": False, "fsGroupPolicy": "File",
            "tokenRequests": [{"audience": "vault", "expirationSeconds": 3600}], "requiresRepublish": True,
        }},
        ["Name", "AttachRequired", "PodInfoOnMount", "StorageCapacity", "TokenRequests", "RequiresRepublish",
         "Modes", "Age"],
        ["bk.csi.example.com", False, True, False, "vault", True, "Persistent,Ephemeral", AGE],
        [(("spec", "tokenRequests", 0, "audience"), "vault"), (("spec", "attachRequired"), False)],
        "csidrivers/bk.csi.example.com",
    ),
    Case(
        "CSINode", "storage.k8s.io", "v1", "csinodes", False,
        {"metadata": meta("bk-node-1"), "spec": {"drivers": [{
            "name": "bk.csi.example.com", "nodeID": "node-1", "topologyKeys": ["topology.kubernetes.io/zone"],
            "allocatable": {"count": 25}}]}},
        ["Name", "Drivers", "Age"],
        ["bk-node-1", 1, AGE],
        [(("spec", "drivers", 0, "allocatable", "count"), 25)],
        "csinodes/bk-node-1",
    ),
    Case(
        "CSIStorageCapacity", "storage.k8s.io", "v1", "csistoragecapacities", True,
        {"metadata": meta("zone-a-fast"), "storageClassName": "bk-fast",
         "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "eu-west-1a"}},
         "capacity": "100Gi", "maximumVolumeSize": "10Gi"},
        ["Name", "StorageClassName", "Capacity"],
        ["zone-a-fast", "bk-fast", "100Gi"],
        [(("capacity", "string"), "100Gi")],
        f"csistoragecapacities/{NS}/zone-a-fast",
    ),
    Case(
        "VolumeAttachment", "storage.k8s.io", "v1", "volumeattachments", False,
        {"metadata": meta("bk-va-1"), "spec": {
            "attacher": "ebs.csi.aws.com", "nodeName": "node-1", "source": {"persistentVolumeName": "bk-pv1"}}},
        ["Name", "Attacher", "PV", "Node", "Attached", "Age"],
        ["bk-va-1", "ebs.csi.aws.com", "bk-pv1", "node-1", True, AGE],
        [(("spec", "source", "persistentVolumeName"), "bk-pv1"), (("status", "attached"), True)],
        "volumeattachments/bk-va-1", subresources=STATUS,
        status={"attached": True, "attachmentMetadata": {"devicePath": "/dev/xvdba"}},
    ),
    # ---- admissionregistration.k8s.io/v1 ---------------------------------------------------------
    Case(
        "MutatingWebhookConfiguration", "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", False,
        {"metadata": meta("bk-sidecar-injector"), "webhooks": [{
            "name": "inject.sidecar.example.com",
            "clientConfig": {"service": {"namespace": NS, "name": "injector", "path": "/mutate", "port": 443},
                             "caBundle": CA},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                       "scope": "Namespaced"}],
            "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "reinvocationPolicy": "IfNeeded", "timeoutSeconds": 5,
            "namespaceSelector": {"matchLabels": {"inject": "true"}},
        }]},
        ["Name", "Webhooks", "Age"],
        ["bk-sidecar-injector", 1, AGE],
        [(("Webhooks", 0, "name"), "inject.sidecar.example.com"), (("Webhooks", 0, "sideEffects"), "None")],
        "mutatingwebhookconfigurations/bk-sidecar-injector", categories=["api-extensions"],
    ),
    Case(
        "ValidatingWebhookConfiguration", "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
        False,
        {"metadata": meta("bk-policy-check"), "webhooks": [
            {"name": f"{check}.policy.example.com",
             "clientConfig": {"url": f"https://policy.example.com/{check}", "caBundle": CA},
             "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                        "resources": ["deployments"]}],
             "sideEffects": "None", "admissionReviewVersions": ["v1"], "matchPolicy": "Equivalent"}
            for check in ("labels", "images")]},
        ["Name", "Webhooks", "Age"],
        ["bk-policy-check", 2, AGE],
        [(("Webhooks", 1, "clientConfig", "url"), "https://policy.example.com/images")],
        "validatingwebhookconfigurations/bk-policy-check", categories=["api-extensions"],
    ),
    Case(
        "ValidatingAdmissionPolicy", "admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", False,
        {"metadata": meta("bk-replica-limit"), "spec": {
            "failurePolicy": "Fail",
            "paramKind": {"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit"},
            "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                    "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
            "validations": [
                {"expression": "object.spec.replicas <= params.maxReplicas", "message": "too many replicas"},
                {"expression": "object.spec.replicas >= 1", "reason": "Invalid"}],
        }},
        ["Name", "Validations", "ParamKind", "Age"],
        ["bk-replica-limit", 2, "rules.example.com/v1/ReplicaLimit", AGE],
        [(("spec", "validations", 0, "Expression"), "object.spec.replicas <= params.maxReplicas")],
        "validatingadmissionpolicies/bk-replica-limit", categories=["api-extensions"], subresources=STATUS,
    ),
    Case(
        "ValidatingAdmissionPolicyBinding", "admissionregistration.k8s.io", "v1",
        "validatingadmissionpolicybindings", False,
        {"metadata": meta("bk-replica-limit-binding"), "spec": {
            "policyName": "bk-replica-limit",
            "paramRef": {"name": "replica-limit-prod", "namespace": NS, "parameterNotFoundAction": "Deny"},
            "validationActions": ["Deny", "Audit"],
        }},
        ["Name", "PolicyName", "ParamRef", "Age"],
        ["bk-replica-limit-binding", "bk-replica-limit", f"{NS}/replica-limit-prod", AGE],
        [(("spec", "validationActions"), ["Deny", "Audit"])],
        "validatingadmissionpolicybindings/bk-replica-limit-binding", categories=["api-extensions"],
    ),
    # ---- flowcontrol.apiserver.k8s.io/v1 ---------------------------------------------------------
    Case(
        "PriorityLevelConfiguration", "flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations", False,
        {"metadata": meta("bk-batch"), "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 20, "lendablePercent": 50,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 32, "handSize": 6, "queueLengthLimit": 100}}}}},
        ["Name", "Type", "NominalConcurrencyShares", "Queues", "HandSize", "QueueLengthLimit", "Age"],
        ["bk-batch", "Limited", 20, 32, 6, 100, AGE],
        [(("spec", "limited", "limitResponse", "queuing", "handSize"), 6)],
        "prioritylevelconfigurations/bk-batch", subresources=STATUS,
    ),
    Case(
        "FlowSchema", "flowcontrol.apiserver.k8s.io", "v1", "flowschemas", False,
        {"metadata": meta("bk-batch-jobs"), "spec": {
            "priorityLevelConfiguration": {"name": "bk-batch"},
            "matchingPrecedence": 800,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [{"subjects": [{"kind": "ServiceAccount", "serviceAccount": {"namespace": NS,
                                                                                 "name": "batch-runner"}}],
                       "resourceRules": [{"verbs": ["*"], "apiGroups": ["batch"], "resources": ["jobs"],
                                          "namespaces": ["*"]}]}],
        }},
        ["Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age", "MissingPL"],
        ["bk-batch-jobs", "bk-batch", 800, "ByUser", AGE, "False"],
        [(("spec", "rules", 0, "subjects", 0, "serviceAccount", "name"), "batch-runner")],
        "flowschemas/bk-batch-jobs", subresources=STATUS,
        status={"conditions": [{"type": "Dangling", "status": "False", "reason": "Found",
                                "message": "This FlowSchema references the PriorityLevelConfiguration object "
                                           "named \"bk-batch\" and it exists",
                                "lastTransitionTime": "2025-01-01T00:00:00Z"}]},
    ),
    # ---- apiregistration.k8s.io/v1 (kube-aggregator) ---------------------------------------------
    Case(
        "APIService", "apiregistration.k8s.io", "v1", "apiservices", False,
        {"metadata": meta("v1beta1.widgets.example.com"), "spec": {
            "service": {"namespace": NS, "name": "widget-api", "port": 443},
            "group": "widgets.example.com", "version": "v1beta1", "insecureSkipTLSVerify": True,
            "groupPriorityMinimum": 1000, "versionPriority": 15,
        }},
        ["Name", "Service", "Available", "Age"],
        ["v1beta1.widgets.example.com", f"{NS}/widget-api", "False (FailedDiscoveryCheck)", AGE],
        [(("spec", "groupPriorityMinimum"), 1000), (("status", "conditions", 0, "reason"), "FailedDiscoveryCheck")],
        "apiregistration.k8s.io/apiservices/v1beta1.widgets.example.com", categories=["api-extensions"],
        subresources=STATUS,
        status={"conditions": [{"type": "Available", "status": "False", "reason": "FailedDiscoveryCheck",
                                "message": "failing or missing response",
                                "lastTransitionTime": "2025-01-01T00:00:00Z"}]},
    ),
    # ---- apiextensions.k8s.io/v1 -----------------------------------------------------------------
    Case(
        "CustomResourceDefinition", "apiextensions.k8s.io", "v1", "customresourcedefinitions", False,
        {"metadata": meta("widgets.widgets.example.com"), "spec": {
            "group": "widgets.example.com",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList",
                      "shortNames": ["wd"]},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": {
                    "size": {"type": "integer", "minimum": 1}, "color": {"type": "string"}}}},
            }}}],
        }},
        DEFAULT_COLUMNS, ["widgets.widgets.example.com", CREATED],
        [(("spec", "names", "shortNames"), ["wd"]),
         (("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "size", "type"),
          "integer")],
        "apiextensions.k8s.io/customresourcedefinitions/widgets.widgets.example.com", short_names=["crd", "crds"],
        categories=["api-extensions"], subresources=STATUS,
    ),
]  # fmt: skip
IDS = [case.kind for case in CASES]
BY_KIND = {case.kind: case for case in CASES}


def _subset(sent: Any, got: Any, path: str = "") -> None:
    """Everything sent is in what came back, unchanged (the server may add metadata; empty values of
    omitempty fields are left out, as Go leaves them out)."""
    if isinstance(sent, dict):
        assert isinstance(got, dict), f"{path}: {got!r}"
        for key, value in sent.items():
            if value in (False, 0, "", [], {}) and key not in got:
                continue
            assert key in got, f"{path}.{key} missing from {sorted(got)}"
            _subset(value, got[key], f"{path}.{key}")
    elif isinstance(sent, list):
        assert isinstance(got, list) and len(got) == len(sent), f"{path}: {got!r}"
        for i, (a, b) in enumerate(zip(sent, got, strict=True)):
            _subset(a, b, f"{path}[{i}]")
    else:
        assert sent == got, f"{path}: sent {sent!r}, got {got!r}"


def _cell_matches(expected: Any, got: Any) -> bool:
    if isinstance(expected, re.Pattern):
        return isinstance(got, str) and expected.match(got) is not None
    return type(expected) is type(got) and expected == got


def _dig(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


@pytest.fixture(scope="module")
def created(client: httpx.Client) -> dict[str, dict[str, Any]]:
    """Every case's object, created once (its namespace first), with what each step answered."""
    response = client.post("/api/v1/namespaces", json={"metadata": {"name": NS}})
    assert response.status_code in (201, 409), response.text
    results: dict[str, dict[str, Any]] = {}
    for case in CASES:
        for ref in case.body["metadata"].get("ownerReferences", []):
            owner = results.get(ref["kind"])
            if owner is not None:  # the owner's real uid: the garbage collector removes dependents of missing owners
                ref["uid"] = owner["created"]["metadata"]["uid"]
        body = {"apiVersion": case.api_version, "kind": case.kind, **case.body}
        response = client.post(case.collection(), json=body)
        result: dict[str, Any] = {"code": response.status_code, "created": response.json()}
        if case.status is not None and response.status_code == 201:
            current = response.json()
            for _ in range(5):  # a controller of the kind (APF's) may write its status meanwhile: 409, again
                status_response = client.put(case.item() + "/status", json={**current, "status": case.status})
                if status_response.status_code != 409:
                    break
                current = client.get(case.item()).json()
            result["status_code"] = status_response.status_code
            result["status_body"] = status_response.json()
        results[case.kind] = result
    return results


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_create_and_read_back(client: httpx.Client, created: dict, case: Case) -> None:
    result = created[case.kind]
    assert result["code"] == 201, result["created"]
    body = result["created"]
    assert body["kind"] == case.kind and body["apiVersion"] == case.api_version
    _subset({k: v for k, v in case.body.items() if k != "status"}, body)
    if case.status is not None:
        assert result["status_code"] == 200, result["status_body"]
        body = result["status_body"]
        _subset(case.status, body["status"])
    got = client.get(case.item())
    assert got.status_code == 200, got.text
    assert got.json() == body


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_list(client: httpx.Client, created: dict, case: Case) -> None:
    listed = client.get(case.collection())
    assert listed.status_code == 200, listed.text
    body = listed.json()
    assert body["kind"] == case.kind + "List" and body["apiVersion"] == case.api_version
    assert case.name in [item["metadata"]["name"] for item in body["items"]]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_table_as_upstream_prints_it(client: httpx.Client, created: dict, case: Case) -> None:
    response = client.get(case.item(), headers={"Accept": TABLE})
    assert response.status_code == 200, response.text
    table = response.json()
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == case.columns
    (row,) = table["rows"]
    cells = row["cells"]
    assert len(cells) == len(case.cells), cells
    for name, expected, got in zip(case.columns, case.cells, cells, strict=True):
        assert _cell_matches(expected, got), f"{case.kind} column {name}: expected {expected!r}, got {got!r}"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_protobuf_as_upstream_decodes_it(client: httpx.Client, created: dict, case: Case) -> None:
    response = client.get(case.item(), headers={"Accept": PROTOBUF})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == PROTOBUF
    type_meta, obj = decode_object(response.content, case.message())
    assert type_meta == {"apiVersion": case.api_version, "kind": case.kind}
    assert obj["metadata"]["name"] == case.name
    assert "?unknown" not in obj
    for path, expected in case.wire:
        assert _dig(obj, path) == expected, path


def test_stored_under_upstreams_etcd_keys(server: GatewayProcess, created: dict) -> None:
    """Each object's storage key, as test/integration/etcd/data.go expects it."""
    with grpc.insecure_channel(server.storage) as channel:
        kv = rpc_pb2_grpc.KVStub(channel)
        for case in CASES:
            key = f"/registry/{case.etcd_key}".encode()
            response = kv.Range(rpc_pb2.RangeRequest(key=key, keys_only=True), timeout=10)
            assert [kv.key for kv in response.kvs] == [key], case.kind


def _discovery(client: httpx.Client, group: str, version: str) -> dict[str, dict]:
    path = f"/apis/{group}/{version}" if group else "/api/v1"
    response = client.get(path)
    assert response.status_code == 200, response.text
    return {r["name"]: r for r in response.json()["resources"]}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_discovery_lists_the_resource(client: httpx.Client, case: Case) -> None:
    resources = _discovery(client, case.group, case.version)
    entry = resources[case.plural]
    assert entry["kind"] == case.kind
    assert entry["namespaced"] == case.namespaced
    assert entry["singularName"] == case.kind.lower()
    assert entry["verbs"] == case.verbs
    assert entry.get("shortNames", []) == case.short_names
    assert entry.get("categories", []) == case.categories
    subresources = {name.split("/", 1)[1]: r for name, r in resources.items() if name.startswith(case.plural + "/")}
    assert {name: r["verbs"] for name, r in subresources.items()} == case.subresources
    if "scale" in subresources:
        assert (subresources["scale"]["group"], subresources["scale"]["version"]) == ("autoscaling", "v1")
        assert subresources["scale"]["kind"] == "Scale"


def test_component_statuses_are_read_only(client: httpx.Client) -> None:
    """componentstatuses: get and list only (upstream computes them; none is ever stored here)."""
    entry = _discovery(client, "", "v1")["componentstatuses"]
    assert entry["verbs"] == ["get", "list"] and entry["shortNames"] == ["cs"] and not entry["namespaced"]
    listed = client.get("/api/v1/componentstatuses")
    assert listed.status_code == 200 and listed.json()["kind"] == "ComponentStatusList"
    columns = client.get("/api/v1/componentstatuses", headers={"Accept": TABLE}).json()["columnDefinitions"]
    assert [c["name"] for c in columns] == ["Name", "Status", "Message", "Error"]
    refused = client.post("/api/v1/componentstatuses", json={"metadata": {"name": "etcd-0"}})
    assert refused.status_code == 405, refused.text


def test_component_statuses_probe_the_storage_and_the_local_components(client: httpx.Client) -> None:
    """As upstream: etcd-0 is the storage (Healthy, "ok"); the scheduler and controller manager are
    probed on their local health ports, where nothing runs here."""
    items = client.get("/api/v1/componentstatuses").json()["items"]
    by_name = {i["metadata"]["name"]: i["conditions"] for i in items}
    assert list(by_name) == ["controller-manager", "etcd-0", "scheduler"]
    assert by_name["etcd-0"] == [{"type": "Healthy", "status": "True", "message": "ok"}]
    assert by_name["scheduler"] == [
        {
            "type": "Healthy",
            "status": "False",
            "error": 'Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: connection refused',
        }
    ]
    one = client.get("/api/v1/componentstatuses/etcd-0")
    assert one.status_code == 200 and one.json()["kind"] == "ComponentStatus"
    missing = client.get("/api/v1/componentstatuses/kubelet")
    assert missing.status_code == 404
    assert missing.json()["message"] == 'componentstatuses "kubelet" not found'
    table = client.get("/api/v1/componentstatuses", headers={"Accept": TABLE}).json()["rows"]
    assert [r["cells"] for r in table][1] == ["etcd-0", "Healthy", "ok", ""]


def test_kinds_without_a_resource() -> None:
    """Kinds served through another version's storage, or virtually: known kinds, no resource here."""
    reg = registry()
    for group, version, kind in [
        ("authentication.k8s.io", "v1", "TokenRequest"),
        ("", "v1", "PodExecOptions"),
    ]:
        gvk = GroupVersionKind(group, version, kind)
        assert gvk in reg.kinds, gvk
        assert reg.resource_for_kind(gvk) is None, gvk
    bindings = reg.resources[("", "v1", "bindings")]  # virtual: a Binding sets its pod's node
    assert bindings.verbs == ("create",) and bindings.virtual and bindings.list_message == ""
    for group, plural in [
        ("authentication.k8s.io", "tokenreviews"),
        ("authentication.k8s.io", "selfsubjectreviews"),
        ("authorization.k8s.io", "subjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectaccessreviews"),
        ("authorization.k8s.io", "localsubjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectrulesreviews"),
    ]:
        review = reg.resources[(group, "v1", plural)]  # virtual: create only, nothing stored, no list kind
        assert review.verbs == ("create",) and review.virtual and review.list_message == ""
    # served from another version's storage, converted (tests/gateway/test_conversion.py)
    for key, stored in [
        (
            ("autoscaling", "v1", "horizontalpodautoscalers"),
            GroupVersionKind("autoscaling", "v2", "HorizontalPodAutoscaler"),
        ),
        (("events.k8s.io", "v1", "events"), GroupVersionKind("", "v1", "Event")),
    ]:
        storage_kind = reg.resources[key].storage_kind
        assert storage_kind is not None and storage_kind.gvk == stored
    for group, version, kind in [
        ("networking.k8s.io", "v1", "IPAddress"),
        ("networking.k8s.io", "v1", "ServiceCIDR"),
        ("storage.k8s.io", "v1", "VolumeAttributesClass"),
        ("admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicyBinding"),
    ]:
        assert GroupVersionKind(group, version, kind) not in reg.kinds  # not GA in Kubernetes 1.32


# ---- kubectl ---------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_kubectl_get_by_short_name(kubectl: Kubectl, created: dict, case: Case) -> None:
    resource = case.short_names[0] if case.short_names else case.plural
    scope = ["-n", NS] if case.namespaced else []
    out = kubectl.run("get", resource, case.name, *scope).stdout.splitlines()
    header = [c.name.upper() for c in registry().resource(case.group, case.version, case.plural).printer_columns
              if c.priority == 0] or ["NAME", "CREATED AT"]  # fmt: skip
    assert out[0].split() == " ".join(header).split()
    assert out[1].split()[0] == case.name.split()[0]


def test_kubectl_get_all(kubectl: Kubectl, created: dict) -> None:
    """The "all" category: the workloads among the new kinds appear with pods and services."""
    out = kubectl.run("get", "all", "-n", NS).stdout
    for name in [
        "replicationcontroller/web-rc",
        "daemonset.apps/node-agent",
        "replicaset.apps/web-rs",
        "statefulset.apps/db",
        "horizontalpodautoscaler.autoscaling/web-hpa",
        "job.batch/pi",
        "cronjob.batch/nightly",
    ]:
        assert name in out, out
    assert "limitrange" not in out and "ingress" not in out


GENERATORS = [
    (["role", "gen-role", "--verb=get,list", "--resource=pods"], "roles", "Role", True),
    (["rolebinding", "gen-rolebinding", "--role=gen-role", "--user=dev", "--serviceaccount=gen:ci"], "rolebindings",
     "RoleBinding", True),
    (["clusterrole", "gen-clusterrole", "--verb=get", "--resource=nodes"], "clusterroles", "ClusterRole", False),
    (["clusterrolebinding", "gen-clusterrolebinding", "--clusterrole=gen-clusterrole", "--group=ops"],
     "clusterrolebindings", "ClusterRoleBinding", False),
    (["job", "gen-job", "--image=busybox"], "jobs", "Job", True),
    (["cronjob", "gen-cronjob", "--image=busybox", "--schedule=*/5 * * * *"], "cronjobs", "CronJob", True),
    (["priorityclass", "gen-priorityclass", "--value=100", "--description=generated"], "priorityclasses",
     "PriorityClass", False),
    (["poddisruptionbudget", "gen-pdb", "--selector=app=gen", "--min-available=1"], "poddisruptionbudgets",
     "PodDisruptionBudget", True),
    (["ingress", "gen-ingress", "--rule=gen.example.com/api*=api:8080"], "ingresses", "Ingress", True),
    (["quota", "gen-quota", "--hard=pods=4,cpu=2"], "resourcequotas", "ResourceQuota", True),
]  # fmt: skip


@pytest.fixture(scope="module")
def generated_namespace(client: httpx.Client) -> str:
    response = client.post("/api/v1/namespaces", json={"metadata": {"name": "gen"}})
    assert response.status_code in (201, 409), response.text
    return "gen"


@pytest.mark.parametrize(("args", "resource", "kind", "namespaced"), GENERATORS, ids=[g[2] for g in GENERATORS])
def test_kubectl_create_generators(
    kubectl: Kubectl, generated_namespace: str, args: list[str], resource: str, kind: str, namespaced: bool
) -> None:
    scope = ["-n", generated_namespace] if namespaced else []
    out = kubectl.run("create", *args, *scope).stdout
    assert f"/{args[1]} created" in out, out
    got = json.loads(kubectl.run("get", resource, args[1], *scope, "-o", "json").stdout)
    assert got["kind"] == kind and got["metadata"]["name"] == args[1]
