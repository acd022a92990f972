"""The root CA certificate publisher (kube-controller-manager's root-ca-cert-publisher,
pkg/controller/certificates/rootcacertpublisher): a ConfigMap ``kube-root-ca.crt`` in every
namespace whose ``ca.crt`` is the cluster's CA, for pods to verify the API server with (the
ServiceAccount admission plugin projects it into every pod's ``kube-api-access`` volume). Made
again when deleted; its data and its description annotation put back when changed.
"""

from __future__ import annotations

from protokube.gateway import errors
from protokube.gateway.controllers.pernamespace import OPTIONS, create, is_active, run_per_namespace
from protokube.gateway.errors import StatusError
from protokube.gateway.objects.codec import Obj
from protokube.gateway.registry.store import Store

NAME = "kube-root-ca.crt"
KEY = "ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as "
    "the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of "
    "Kubernetes clusters."
)


class RootCAPublisher:
    def __init__(self, namespaces: Store, configmaps: Store, root_ca: bytes) -> None:
        self.namespaces = namespaces
        self.configmaps = configmaps
        self.data = {KEY: root_ca.decode()}

    async def run(self) -> None:
        await run_per_namespace(self.namespaces, self.configmaps, NAME, self.sync)

    def _as_it_should_be(self, configmap: Obj) -> bool:
        return dict(configmap.data) == self.data and bool(configmap.metadata.annotations.get(DESCRIPTION_ANNOTATION))

    async def sync(self, namespace: str) -> None:
        view = self.configmaps.storage.cached(namespace, NAME)
        if view is None:
            configmap = {
                "metadata": {"name": NAME, "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                "data": self.data,
            }
            await create(self.namespaces, self.configmaps, namespace, configmap)
        elif not self._as_it_should_be(view.obj) and await is_active(self.namespaces, namespace):
            await self._reset(namespace)

    async def _reset(self, namespace: str) -> None:
        store = self.configmaps

        def reset(current: Obj | None) -> Obj:
            if current is None:
                raise errors.not_found(store.resource, NAME)
            configmap = store.codec.copy(current)
            configmap.data.clear()
            configmap.data.update(self.data)
            configmap.metadata.annotations[DESCRIPTION_ANNOTATION] = DESCRIPTION
            return configmap

        try:
            await store.update(namespace, NAME, reset, OPTIONS)
        except StatusError as err:
            if err.code != 404:  # gone meanwhile: its deletion queues the namespace again
                raise
