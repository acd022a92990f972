"""One stored object, two versions: events.k8s.io/v1 Events are core/v1 Events in storage,
converted field by field both ways (upstream's pkg/apis/events/v1 conversion)."""

from __future__ import annotations

import httpx

from .helpers import Kubectl, watch_lines

CORE_EVENT = {
    "metadata": {"name": "started"},
    "involvedObject": {"kind": "Pod", "name": "web-0", "namespace": "NS"},
    "reason": "Started",
    "message": "Started container web",
    "source": {"component": "kubelet", "host": "node-1"},
    "count": 3,
    "type": "Normal",
    "firstTimestamp": "2026-11-22T10:00:00Z",
    "lastTimestamp": "2026-11-22T10:05:00Z",
}
NEW_EVENT = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "ready"},
    "eventTime": "2026-11-22T10:00:00.000000Z",
    "regarding": {"kind": "Node", "name": "node-1"},
    "reason": "NodeReady",
    "note": "node is ready",
    "reportingController": "kubelet",
    "reportingInstance": "node-1",
    "action": "Check",
    "type": "Normal",
}


def without_meta(obj: dict) -> dict:
    return {k: v for k, v in obj.items() if k not in ("metadata", "kind", "apiVersion")}


def test_a_core_event_read_as_events_k8s_io(client: httpx.Client, namespace: str) -> None:
    body = {**CORE_EVENT, "involvedObject": {**CORE_EVENT["involvedObject"], "namespace": namespace}}
    made = client.post(f"/api/v1/namespaces/{namespace}/events", json=body)
    assert made.status_code == 201, made.text
    read = client.get(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events/started").json()
    assert (read["kind"], read["apiVersion"]) == ("Event", "events.k8s.io/v1")
    assert read["metadata"]["uid"] == made.json()["metadata"]["uid"]
    assert read["metadata"]["resourceVersion"] == made.json()["metadata"]["resourceVersion"]
    assert without_meta(read) == {
        "eventTime": None,
        "reason": "Started",
        "regarding": {"kind": "Pod", "namespace": namespace, "name": "web-0"},
        "note": "Started container web",
        "type": "Normal",
        "deprecatedSource": {"component": "kubelet", "host": "node-1"},
        "deprecatedFirstTimestamp": "2026-11-22T10:00:00Z",
        "deprecatedLastTimestamp": "2026-11-22T10:05:00Z",
        "deprecatedCount": 3,
    }


def test_an_events_k8s_io_event_written_and_read_as_core(client: httpx.Client, namespace: str) -> None:
    made = client.post(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", json=NEW_EVENT)
    assert made.status_code == 201, made.text
    core = client.get(f"/api/v1/namespaces/{namespace}/events/ready").json()
    assert core["involvedObject"] == {"kind": "Node", "name": "node-1"}
    assert (core["message"], core["reportingComponent"], core["reportingInstance"]) == (
        "node is ready",
        "kubelet",
        "node-1",
    )
    assert core["eventTime"] == "2026-11-22T10:00:00.000000Z" and core["action"] == "Check"
    # an update through one version keeps what only the other names
    event = made.json()
    event["note"] = "node is ready again"
    updated = client.put(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events/ready", json=event)
    assert updated.status_code == 200, updated.text
    core = client.get(f"/api/v1/namespaces/{namespace}/events/ready").json()
    assert core["message"] == "node is ready again" and core["reportingComponent"] == "kubelet"


def test_field_selectors_use_each_versions_labels(client: httpx.Client, namespace: str) -> None:
    client.post(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", json=NEW_EVENT)
    body = {**CORE_EVENT, "involvedObject": {**CORE_EVENT["involvedObject"], "namespace": namespace}}
    client.post(f"/api/v1/namespaces/{namespace}/events", json=body)

    def names(path: str, selector: str) -> list[str]:
        answer = client.get(path, params={"fieldSelector": selector})
        assert answer.status_code == 200, answer.text
        return [i["metadata"]["name"] for i in answer.json()["items"]]

    assert names(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", "regarding.kind=Node") == ["ready"]
    assert names(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", "reportingController=kubelet") == ["ready"]
    assert names(f"/api/v1/namespaces/{namespace}/events", "involvedObject.kind=Pod") == ["started"]


def test_a_watch_of_one_version_sees_writes_through_the_other(client: httpx.Client, namespace: str) -> None:
    rv = client.get(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events").json()["metadata"]["resourceVersion"]
    body = {**CORE_EVENT, "involvedObject": {**CORE_EVENT["involvedObject"], "namespace": namespace}}
    client.post(f"/api/v1/namespaces/{namespace}/events", json=body)
    (event,) = watch_lines(client, f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", 1, resourceVersion=rv)
    assert event["type"] == "ADDED"
    assert event["object"]["apiVersion"] == "events.k8s.io/v1" and event["object"]["note"] == "Started container web"


def test_kubectl_prints_both_versions_alike(client: httpx.Client, kubectl: Kubectl, namespace: str) -> None:
    client.post(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", json=NEW_EVENT)
    core = kubectl.run("get", "events", "-n", namespace).stdout.splitlines()
    new = kubectl.run("get", "events.v1.events.k8s.io", "-n", namespace).stdout.splitlines()
    assert core[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert new == core
    assert new[1].split()[1:] == ["Normal", "NodeReady", "node/node-1", "node", "is", "ready"]


HPA_V2 = {
    "apiVersion": "autoscaling/v2",
    "kind": "HorizontalPodAutoscaler",
    "metadata": {"name": "web", "annotations": {"team": "a"}},
    "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 2,
        "maxReplicas": 10,
        "metrics": [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
            },
            {
                "type": "Pods",
                "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}},
            },
            {
                "type": "External",
                "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "30"}},
            },
        ],
    },
}


def test_an_autoscaling_v2_hpa_read_and_written_through_v1_loses_nothing(client: httpx.Client, namespace: str) -> None:
    v2 = f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers"
    v1 = f"/apis/autoscaling/v1/namespaces/{namespace}/horizontalpodautoscalers"
    made = client.post(v2, json=HPA_V2)
    assert made.status_code == 201, made.text
    read = client.get(f"{v1}/web").json()
    assert read["apiVersion"] == "autoscaling/v1"
    assert read["spec"] == {
        "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
        "minReplicas": 2,
        "maxReplicas": 10,
        "targetCPUUtilizationPercentage": 60,
    }
    annotations = read["metadata"]["annotations"]
    assert annotations["team"] == "a"
    assert annotations["autoscaling.alpha.kubernetes.io/metrics"] == (
        '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1k"}},'
        '{"type":"External","external":{"metricName":"queue","targetValue":"30"}}]'
    )
    # written back through v1 (a new CPU target), the other metrics survive in v2
    read["spec"]["targetCPUUtilizationPercentage"] = 70
    assert client.put(f"{v1}/web", json=read).status_code == 200
    metrics = client.get(f"{v2}/web").json()["spec"]["metrics"]
    assert metrics == [
        {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}},
        {"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "30"}}},
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}},
    ]
    assert client.get(f"{v2}/web").json()["metadata"]["annotations"] == {"team": "a"}


def test_a_v1_hpa_without_a_target_gets_upstreams_implicit_cpu_metric(client: httpx.Client, namespace: str) -> None:
    v1 = f"/apis/autoscaling/v1/namespaces/{namespace}/horizontalpodautoscalers"
    body = {
        "metadata": {"name": "bare"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}, "maxReplicas": 3},
    }
    assert client.post(v1, json=body).status_code == 201
    stored = client.get(f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/bare").json()
    assert stored["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}
    ]
    garbage = {**body, "metadata": {"name": "bad", "annotations": {"autoscaling.alpha.kubernetes.io/metrics": "{nope"}}}
    refused = client.post(v1, json=garbage)
    assert refused.status_code == 400 and refused.json()["reason"] == "BadRequest"


def test_discovery_prefers_autoscaling_v2(client: httpx.Client) -> None:
    group = client.get("/apis/autoscaling").json()
    assert group["preferredVersion"]["version"] == "v2"
    assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
