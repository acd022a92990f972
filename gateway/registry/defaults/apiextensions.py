"""apiextensions.k8s.io/v1 defaults: k8s.io/apiextensions-apiserver
pkg/apis/apiextensions/v1/defaults.go (1.32)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.registry.defaults.base import defaulter
from protokube.gateway.registry.defaults.values import default

APIEXTENSIONS = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1"


@defaulter(f"{APIEXTENSIONS}.CustomResourceDefinition")
def custom_resource_definition(obj: Message) -> None:
    """storedVersions starts as the storage version."""
    if not obj.status.storedVersions:
        storage = next((v.name for v in obj.spec.versions if v.storage), None)
        if storage is not None:
            obj.status.storedVersions.append(storage)


@defaulter(f"{APIEXTENSIONS}.CustomResourceDefinitionSpec")
def custom_resource_definition_spec(obj: Message) -> None:
    if not obj.scope:
        obj.scope = "Namespaced"
    names = obj.names
    if not names.singular:
        names.singular = names.kind.lower()
    if not names.listKind and names.kind:
        names.listKind = names.kind + "List"
    if not obj.HasField("conversion"):
        obj.conversion.strategy = "None"


@defaulter(f"{APIEXTENSIONS}.ServiceReference")
def service_reference(obj: Message) -> None:
    default(obj, "port", 443)
