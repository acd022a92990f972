"""lightkube against the plugin's server: typed objects created, read, patched, listed and deleted."""

from __future__ import annotations

from lightkube import Client, KubeConfig
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap

from protokube.testing import Server


def test_configmaps_through_lightkube(kube_apiserver: Server, kube_namespace: str) -> None:
    client = Client(KubeConfig.from_file(kube_apiserver.kubeconfig), namespace=kube_namespace)
    client.create(ConfigMap(metadata=ObjectMeta(name="settings", labels={"app": "demo"}), data={"color": "blue"}))
    assert client.get(ConfigMap, "settings").data == {"color": "blue"}
    patched = client.patch(ConfigMap, "settings", {"data": {"size": "large"}})
    assert patched.data == {"color": "blue", "size": "large"}
    assert [c.metadata.name for c in client.list(ConfigMap, labels={"app": "demo"})] == ["settings"]
    client.delete(ConfigMap, "settings")
    assert [c.metadata.name for c in client.list(ConfigMap, labels={"app": "demo"})] == []
