"""The official client (the kubernetes package) against the plugin's server: a Deployment created,
its scale changed through the scale subresource, and a watch that sees the change."""

from __future__ import annotations

import kubernetes

from protokube.testing import Server

DEPLOYMENT = {
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]},
        },
    },
}


def test_a_deployment_through_the_official_client(kube_apiserver: Server, kube_namespace: str) -> None:
    client = kubernetes.config.new_client_from_config(str(kube_apiserver.kubeconfig))
    apps = kubernetes.client.AppsV1Api(client)
    created = apps.create_namespaced_deployment(kube_namespace, DEPLOYMENT)
    apps.patch_namespaced_deployment_scale("web", kube_namespace, {"spec": {"replicas": 3}})
    watch = kubernetes.watch.Watch()
    for event in watch.stream(
        apps.list_namespaced_deployment,
        kube_namespace,
        resource_version=created.metadata.resource_version,
        timeout_seconds=30,
    ):
        if event["object"].spec.replicas == 3:
            assert event["type"] == "MODIFIED"
            break
    else:
        raise AssertionError("the watch did not see the new scale")
    assert apps.read_namespaced_deployment_scale("web", kube_namespace).spec.replicas == 3
