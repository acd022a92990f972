"""Quantities and pod totals as upstream's quota and LimitRanger compute them: Go's Add keeps the
left operand's suffix family unless it is zero, init containers count one at a time beside the
sidecars started before them, and quota usage prints as Go prints it."""

from __future__ import annotations

from typing import Any

from protokube.gateway.admission.podresources import is_best_effort, pod_limits, pod_requests
from protokube.gateway.admission.resourcelist import ZERO, Quantity, add, exceeded, pretty, subtract_nonnegative
from protokube.gateway.admission.resourcequota.evaluators import ClaimEvaluator, PodEvaluator, ServiceEvaluator
from protokube.gateway.codecs import kind_codec
from protokube.schema.registry import GroupVersionKind


def core(kind: str, value: dict[str, Any]) -> Any:
    return kind_codec(GroupVersionKind("", "v1", kind), f"k8s.io.api.core.v1.{kind}").from_dict(value).obj


def q(text: str) -> Quantity:
    return Quantity.parse(text)


def test_adding_keeps_the_family_of_the_first_nonzero_operand() -> None:
    assert str(ZERO + q("128Mi")) == "128Mi"
    assert str(q("1Gi") + q("512Mi")) == "1536Mi"
    assert str(q("128Mi") + q("100M")) == "234217728"  # binary, not a whole number of Ki
    assert str(q("500m") + q("500m")) == "1"
    assert str(q("0.5") + q("250m")) == "750m"
    assert q("1.5").milli() == 1500 and q("1.5").integer() == 2 and q("1500m").rounded_up() == q("2")


def test_list_helpers() -> None:
    used = add({"cpu": q("1")}, {"cpu": q("500m"), "pods": q("1")})
    assert pretty(used) == "cpu=1500m,pods=1"
    assert exceeded(used, {"cpu": q("1"), "pods": q("2"), "memory": q("1Gi")}) == ["cpu"]
    assert pretty(subtract_nonnegative({"cpu": q("1"), "pods": q("1")}, {"cpu": q("2"), "memory": q("1")})) == (
        "cpu=0,memory=0,pods=1"
    )


def test_pod_totals_with_init_containers_sidecars_and_overhead() -> None:
    def container(name: str, cpu: str, **extra: Any) -> dict[str, Any]:
        return {"name": name, "image": "x", "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}, **extra}

    pod = core(
        "Pod",
        {
            "spec": {
                "containers": [container("a", "100m"), container("b", "200m")],
                "initContainers": [
                    container("sidecar", "50m", restartPolicy="Always"),
                    container("setup", "1"),  # runs beside the sidecar: 1050m
                ],
                "overhead": {"cpu": "10m"},
            }
        },
    )
    assert str(pod_requests(pod, overhead=False)["cpu"]) == "1050m"
    assert str(pod_requests(pod, overhead=True)["cpu"]) == "1060m"
    assert str(pod_limits(pod, overhead=False)["cpu"]) == "1050m"
    assert not is_best_effort(pod)
    assert is_best_effort(core("Pod", {"spec": {"containers": [{"name": "a", "image": "x"}]}}))


def test_usage_of_pods_services_and_claims() -> None:
    pod = core(
        "Pod",
        {
            "spec": {
                "containers": [
                    {"name": "a", "image": "x", "resources": {"requests": {"memory": "1Gi", "example.com/gpu": "1"}}}
                ]
            }
        },
    )
    assert pretty(PodEvaluator().usage(pod)) == (
        "count/pods=1,memory=1Gi,pods=1,requests.example.com/gpu=1,requests.memory=1Gi"
    )
    ended = core("Pod", {"spec": {"containers": [{"name": "a", "image": "x"}]}, "status": {"phase": "Failed"}})
    assert pretty(PodEvaluator().usage(ended)) == "count/pods=1"
    service = core("Service", {"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 443}]}})
    assert pretty(ServiceEvaluator().usage(service)) == (
        "count/services=1,services=1,services.loadbalancers=0,services.nodeports=2"
    )
    claim = core(
        "PersistentVolumeClaim",
        {"spec": {"storageClassName": "gold", "resources": {"requests": {"storage": "1500m"}}}},
    )
    assert pretty(ClaimEvaluator().usage(claim)) == (
        "count/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/persistentvolumeclaims=1,"
        "gold.storageclass.storage.k8s.io/requests.storage=2,persistentvolumeclaims=1,requests.storage=2"
    )
