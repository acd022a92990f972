"""LimitRanger as kube-apiserver's: a namespace's LimitRanges default the resources of new pods'
containers (and say so in an annotation), and refuse pods and claims outside their bounds with
upstream's messages."""

from __future__ import annotations

from typing import Any

import httpx

ANNOTATION = "kubernetes.io/limit-ranger"


def limit_range(client: httpx.Client, namespace: str, *limits: dict[str, Any]) -> None:
    body = {"metadata": {"name": "limits"}, "spec": {"limits": list(limits)}}
    response = client.post(f"/api/v1/namespaces/{namespace}/limitranges", json=body)
    assert response.status_code == 201, response.text


def default_account(client: httpx.Client, namespace: str) -> None:
    """Pods name the namespace's default ServiceAccount (made here unless a controller made it)."""
    client.post(f"/api/v1/namespaces/{namespace}/serviceaccounts", json={"metadata": {"name": "default"}})


def pod(name: str, *containers: dict[str, Any], init: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"image": "nginx", **c} for c in containers]}
    if init:
        spec["initContainers"] = [{"image": "busybox", **c} for c in init]
    return {"metadata": {"name": name}, "spec": spec}


def resources(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> dict[str, Any]:
    return {"resources": {k: v for k, v in (("requests", requests), ("limits", limits)) if v}}


def create_pod(client: httpx.Client, namespace: str, body: dict[str, Any], **params: str) -> httpx.Response:
    return client.post(f"/api/v1/namespaces/{namespace}/pods", json=body, params=params)


def test_container_defaults_are_set_and_annotated(client: httpx.Client, namespace: str) -> None:
    limit_range(
        client,
        namespace,
        {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "0.1"}},
    )
    stored = client.get(f"/api/v1/namespaces/{namespace}/limitranges/limits").json()["spec"]["limits"][0]
    assert stored["defaultRequest"] == {"cpu": "100m", "memory": "256Mi"}  # defaulted from default
    default_account(client, namespace)
    body = pod("p", {"name": "app"}, {"name": "side", **resources({"cpu": "50m"})}, init=({"name": "setup"},))
    created = create_pod(client, namespace, body)
    assert created.status_code == 201, created.text
    spec = created.json()["spec"]
    assert spec["containers"][0]["resources"] == {
        "limits": {"cpu": "500m", "memory": "256Mi"},
        "requests": {"cpu": "100m", "memory": "256Mi"},
    }
    assert spec["containers"][1]["resources"]["requests"] == {"cpu": "50m", "memory": "256Mi"}
    assert spec["initContainers"][0]["resources"]["limits"] == {"cpu": "500m", "memory": "256Mi"}
    assert created.json()["metadata"]["annotations"][ANNOTATION] == (
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; "
        "memory request for container side; cpu, memory limit for container side; "
        "cpu, memory request for init container setup; cpu, memory limit for init container setup"
    )
    dry = create_pod(client, namespace, pod("dry", {"name": "app"}), dryRun="All")
    assert dry.status_code == 201, dry.text
    assert dry.json()["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "500m", "memory": "256Mi"}


def test_container_min_max_and_ratio_refusals(client: httpx.Client, namespace: str) -> None:
    limit_range(
        client,
        namespace,
        {
            "type": "Container",
            "min": {"cpu": "100m"},
            "max": {"cpu": "2", "memory": "1Gi"},
            "maxLimitRequestRatio": {"memory": "2"},
        },
    )
    default_account(client, namespace)
    small = pod("small", {"name": "c", **resources({"cpu": "50m", "memory": "100Mi"}, {"memory": "300Mi"})})
    refused = create_pod(client, namespace, small)
    assert refused.status_code == 403, refused.text
    assert refused.json()["reason"] == "Forbidden"
    assert refused.json()["message"] == (
        'pods "small" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, '
        "memory max limit to request ratio per Container is 2, but provided ratio is 3.000000]"
    )
    big = pod("big", {"name": "c", **resources({"cpu": "1", "memory": "1Gi"}, {"cpu": "3", "memory": "1Gi"})})
    refused = create_pod(client, namespace, big)
    assert refused.status_code == 403
    assert refused.json()["message"] == 'pods "big" is forbidden: maximum cpu usage per Container is 2, but limit is 3'
    fits = pod("fits", {"name": "c", **resources({"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"})})
    assert create_pod(client, namespace, fits).status_code == 201
    # without defaults in the LimitRange, limits default to max and requests to those limits
    defaulted = create_pod(client, namespace, pod("defaulted", {"name": "c"}))
    assert defaulted.status_code == 201, defaulted.text
    assert defaulted.json()["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "2", "memory": "1Gi"},
        "requests": {"cpu": "2", "memory": "1Gi"},
    }


def test_pod_totals_are_limited(client: httpx.Client, namespace: str) -> None:
    limit_range(client, namespace, {"type": "Pod", "max": {"cpu": "1"}})
    default_account(client, namespace)
    half = resources({"cpu": "750m"}, {"cpu": "750m"})
    refused = create_pod(client, namespace, pod("two", {"name": "a", **half}, {"name": "b", **half}))
    assert refused.status_code == 403
    assert refused.json()["message"] == 'pods "two" is forbidden: maximum cpu usage per Pod is 1, but limit is 1500m'
    unlimited = create_pod(client, namespace, pod("open", {"name": "a"}))
    assert (
        unlimited.json()["message"]
        == 'pods "open" is forbidden: maximum cpu usage per Pod is 1.  No limit is specified'
    )
    assert create_pod(client, namespace, pod("one", {"name": "a", **half})).status_code == 201


def test_claims_storage_bounds(client: httpx.Client, namespace: str) -> None:
    limit_range(
        client, namespace, {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "2Gi"}}
    )

    def claim(name: str, size: str) -> httpx.Response:
        body = {
            "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}},
        }
        return client.post(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", json=body)

    refused = claim("huge", "5Gi")
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, '
        "but request is 5Gi"
    )
    refused = claim("tiny", "500Mi")
    assert refused.json()["message"] == (
        'persistentvolumeclaims "tiny" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, '
        "but request is 500Mi"
    )
    assert claim("right", "1536Mi").status_code == 201
