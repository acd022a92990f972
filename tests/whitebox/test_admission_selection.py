"""Each resource's store runs only the admission plugins that can act on it (Admission.for_resource,
decided once from the plugins' ``handles``): a plugin left out for a resource must be one that does
nothing on any write of it — checked here by running it anyway, on every served kind, operation and
subresource, with nothing to read (a plugin that reached for its caches would fail)."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from protokube.gateway.admission.certificates import (
    CertificateApproval,
    CertificateSigning,
    CertificateSubjectRestriction,
)
from protokube.gateway.admission.clustertrustbundles import ClusterTrustBundleAttest
from protokube.gateway.admission.ingressclass import DefaultIngressClass
from protokube.gateway.admission.inuseprotection import StorageObjectInUseProtection
from protokube.gateway.admission.limitranger import LimitRanger
from protokube.gateway.admission.nodetaint import TaintNodesByCondition
from protokube.gateway.admission.pods import DefaultTolerationSeconds, Priority
from protokube.gateway.admission.podsecurity.plugin import PodSecurity
from protokube.gateway.admission.pvcresize import PersistentVolumeClaimResize
from protokube.gateway.admission.runtimeclass import RuntimeClass
from protokube.gateway.admission.serviceaccount import ServiceAccount
from protokube.gateway.admission.storageclass import DefaultStorageClass
from protokube.gateway.codecs import codec_for
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.admission import CREATE, DELETE, UPDATE, Admission, Attributes
from protokube.schema.registry import Resource, registry

# Each resource-specific plugin, built on nothing: a plugin that reads a cache or asks the
# authorizer here fails with an AttributeError on None.
PLUGINS = [
    CertificateApproval(None),  # type: ignore[arg-type]
    CertificateSigning(None),  # type: ignore[arg-type]
    CertificateSubjectRestriction(),
    ClusterTrustBundleAttest(None),  # type: ignore[arg-type]
    DefaultIngressClass(None),  # type: ignore[arg-type]
    StorageObjectInUseProtection(),
    LimitRanger(None),  # type: ignore[arg-type]
    TaintNodesByCondition(),
    PodSecurity(None, None, None),  # type: ignore[arg-type]
    DefaultTolerationSeconds(),
    Priority(None),
    PersistentVolumeClaimResize(None),  # type: ignore[arg-type]
    RuntimeClass(None),  # type: ignore[arg-type]
    ServiceAccount(None),  # type: ignore[arg-type]
    DefaultStorageClass(None),  # type: ignore[arg-type]
]
SUBRESOURCES = ("", "status", "approval", "ephemeralcontainers", "scale")


def compiled_resources() -> list[Resource]:
    reg = registry()
    resources = [
        resource
        for group, versions in reg.group_versions().items()
        for version in versions
        for resource in reg.resources_in(group, version)
    ]
    return [r for r in resources if r.message and not r.virtual]


def attribute_sets(resource: Resource) -> list[Attributes]:
    """Writes of ``resource``: each operation and subresource, on objects with their metadata set."""
    codec = codec_for(resource)
    out = []
    for operation, subresource in itertools.product((CREATE, UPDATE, DELETE), SUBRESOURCES):
        obj, old = codec.new(), codec.new()
        for each in (obj, old):
            each.metadata.name, each.metadata.namespace = "x", "ns" if resource.namespaced else ""
        new = None if operation == DELETE else obj
        before = None if operation == CREATE else old
        out.append(Attributes(operation, resource, subresource, "ns", "x", new, before, WriteOptions()))
    return out


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: type(p).__name__)
def test_a_plugin_left_out_would_have_done_nothing(plugin: object) -> None:
    left_out = [r for r in compiled_resources() if not plugin.handles(r)]  # type: ignore[attr-defined]
    assert left_out, "every kind handled: nothing is left out"
    kept = [r for r in compiled_resources() if plugin.handles(r)]  # type: ignore[attr-defined]
    assert kept, "no kind handled: the plugin would never run"

    async def run_all() -> None:
        for resource in left_out:
            for attributes in attribute_sets(resource):
                before = [None if o is None else o.SerializeToString() for o in (attributes.obj, attributes.old)]
                for phase in ("admit", "validate"):
                    method = getattr(plugin, phase, None)
                    if method is not None:
                        await method(attributes)
                after = [None if o is None else o.SerializeToString() for o in (attributes.obj, attributes.old)]
                assert after == before, f"{type(plugin).__name__} changed a {resource.plural} object"

    asyncio.run(run_all())


def test_a_store_chain_keeps_what_may_act_and_every_plugin_without_handles() -> None:
    class Anything:
        async def validate(self, attributes: Attributes) -> None:
            return None

    anything = Anything()
    admission = Admission([anything, *PLUGINS], [p for p in PLUGINS if hasattr(p, "admit")])
    reg = registry()
    configmaps, pods = reg.resource("", "v1", "configmaps"), reg.resource("", "v1", "pods")
    assert configmaps is not None and pods is not None
    for_configmaps, for_pods = admission.for_resource(configmaps), admission.for_resource(pods)
    assert for_configmaps.plugins == (anything,) and for_configmaps.mutating == ()
    pod_plugins = {type(p).__name__ for p in (*for_pods.plugins, *for_pods.mutating)}
    assert {"PodSecurity", "ServiceAccount", "LimitRanger", "RuntimeClass", "Priority"} <= pod_plugins
    assert "DefaultStorageClass" not in pod_plugins and anything in for_pods.plugins
