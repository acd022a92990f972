"""What a CustomResourceDefinition serves: one run-time ``Resource`` per served version, its codec
(JSON in storage, pruned and defaulted as upstream's custom resource decoding does) and its strategy
(validation by the version's structural schema).

A CRD's resources are named by its ``status.acceptedNames`` (what the naming controller accepted),
as upstream serves them; all versions share one storage prefix. Conversion "None" rewrites only
apiVersion: every version's codec reads any stored object and writes the storage version's.
Conversion "Webhook": every version's codec reads and writes its own version, and its storage is a
ConvertingBackend that converts what it reads to the version and what it writes to the storage
version by the CRD's conversion webhook.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from protokube.gateway import errors
from protokube.gateway.apiextensions.conversionbackend import ConvertingBackend
from protokube.gateway.apiextensions.schema import Structural
from protokube.gateway.apiextensions.webhookconversion import WebhookConversion, WebhookConverter
from protokube.gateway.errors import FieldError
from protokube.gateway.objects.codec import DecodedObject
from protokube.gateway.objects.unstructured import OBJECT_META, JSONCodec, Unstructured
from protokube.gateway.printing.table import NAME_DESCRIPTION
from protokube.gateway.registry.strategy import UnstructuredStrategy
from protokube.gateway.registry.subresources import SCALE_MESSAGE, ScalePaths
from protokube.gateway.storage.backend import Backend
from protokube.gateway.webhooks.client import Caller
from protokube.schema import deep
from protokube.schema.registry import GroupVersionKind, PrinterColumn, Resource, Subresource, version_order
from protokube.schema.typetree import MAP, STRUCT, Field, Type, proto_type

VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
SUBRESOURCE_VERBS = ("get", "patch", "update")
SCALE = GroupVersionKind("autoscaling", "v1", "Scale")
# Table columns every custom resource has first (apiextensions-apiserver tableconvertor.go).
NAME_COLUMN = PrinterColumn("Name", "string", "name", NAME_DESCRIPTION, 0, ".metadata.name", "")
# Schema errors after which a CRD's CEL rules are not evaluated, and what is said instead
# (apiextensions-apiserver's customresource strategy, hasBlockingErr).
BLOCKING = frozenset(
    {"FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany", "FieldValueTypeInvalid"}
)
RULES_NOT_CHECKED = (
    "some validation rules were not checked because the object was invalid; correct the existing errors to "
    "complete validation"
)
COLUMN_DESCRIPTION = "Custom resource definition column (in JSONPath format): "  # tableconvertor's default


@dataclass
class CustomVersion:
    """One served version of a CRD, kept with its Resource (``Resource.extension``). Only
    ``terminating`` changes in place (the serving sink flips it; watches of the objects go on)."""

    crd: str  # the CRD's name
    schema: Structural
    props: dict[str, Any]  # the openAPIV3Schema as written (OpenAPI publishes it)
    storage_version: GroupVersionKind  # what stored objects say they are
    scale: ScalePaths | None
    warning: str  # the Warning header of a deprecated version ("" when not deprecated)
    conversion: WebhookConversion | None  # None: strategy None
    terminating: bool = False  # the CRD is being deleted: no new objects

    # ---- what the server asks of a run-time resource's extension ----
    def codec(self, resource: Resource) -> CustomResourceCodec:
        list_gvk = GroupVersionKind(resource.group, resource.version, resource.list_kind)
        return CustomResourceCodec(resource.gvk, list_gvk, self)

    def strategy(self, resource: Resource, codec: CustomResourceCodec) -> CustomResourceStrategy:
        return CustomResourceStrategy(resource, codec)

    def storage(self, resource: Resource, backend: Backend, caller: Caller) -> Backend:
        """The backend this version's objects are read and written through."""
        if self.conversion is None:
            return backend
        converter = WebhookConverter(self.conversion, caller, resource.kind, resource.list_kind)
        return ConvertingBackend(backend, converter, resource.gvk.api_version, self.storage_version.api_version)

    def object_type(self) -> Type:
        """The type apply merges with: the schema's, with ObjectMeta's metadata (undeclared keys
        deduced when the root preserves unknown fields or declares no properties)."""
        root = self.schema.type_tree()
        fields = dict(root.fields) if root.kind == STRUCT else {}
        fields["metadata"] = Field("metadata", proto_type(OBJECT_META))
        element = root.element if root.kind in (STRUCT, MAP) else None
        return Type(STRUCT, element=element, _fields=fields)


class CustomResourceCodec(JSONCodec):
    """JSON objects pruned and defaulted by the version's schema; stored as the storage version."""

    def __init__(self, gvk: GroupVersionKind, list_gvk: GroupVersionKind, version: CustomVersion) -> None:
        super().__init__(gvk, list_gvk)
        self.version = version

    def from_dict(self, data: dict[str, Any]) -> DecodedObject:
        # Pruning and defaulting change the object in place; metadata (a JSONObject that knows
        # its duplicate keys) they leave alone.
        data = {key: value if key == "metadata" else deep.copy(value) for key, value in data.items()}
        pruned = self.version.schema.prune(data)
        self.version.schema.default(data)
        decoded = super().from_dict(data)
        decoded.violations[:0] = [f'unknown field "{path}"' for path in pruned]
        return decoded

    def decode(self, value: bytes) -> Unstructured:
        obj = super().decode(value)
        self.version.schema.default(obj.content)  # defaults apply on read too (upstream)
        return obj

    def encode(self, obj: Unstructured) -> bytes:
        data = self._dict(obj)
        if self.version.conversion is None:  # webhook conversion: the storage converts
            data["apiVersion"] = self.version.storage_version.api_version
        data["metadata"].pop("resourceVersion", None)
        return deep.dumps(data, orjson.OPT_SORT_KEYS)


class CustomResourceStrategy(UnstructuredStrategy):
    """Validation by the version's structural schema (and its CEL rules)."""

    def __init__(self, resource: Resource, codec: CustomResourceCodec) -> None:
        super().__init__(resource, codec)
        self.schema = codec.version.schema

    def prepare_for_create(self, obj: Unstructured) -> None:
        if self.codec.version.terminating:  # apiextensions-apiserver's crdHandler
            raise errors.new(
                405, "MethodNotAllowed", "create not allowed while custom resource definition is terminating"
            )
        super().prepare_for_create(obj)

    def validate(self, obj: Unstructured, old: Unstructured | None) -> list[FieldError]:
        return self.schema.validate_schema(self.codec.to_dict(obj))

    async def validate_rules(
        self, obj: Unstructured, old: Unstructured | None, found: list[FieldError]
    ) -> list[FieldError]:
        """The CEL rules, unless the schema's checks found an error that blocks them (upstream's
        hasBlockingErr: an unsupported, required, too long, too many or wrongly typed value)."""
        if self.schema.has_rules and any(error.type in BLOCKING for error in found):
            return [FieldError.invalid("<nil>", None, RULES_NOT_CHECKED)]
        old_value = self.codec.to_dict(old) if old is not None else None
        return await self.schema.validate_rules(self.codec.to_dict(obj), old_value)


def resources_of(crd: dict[str, Any]) -> list[Resource]:
    """The Resources a CRD serves now: one per served version, named by its accepted names."""
    spec, status = crd.get("spec") or {}, crd.get("status") or {}
    names = status.get("acceptedNames") or {}
    if not names.get("plural") or not names.get("kind"):
        return []
    versions = spec.get("versions") or []
    storage = next((v["name"] for v in versions if v.get("storage")), None)
    if storage is None:
        return []
    newest = _newest_undeprecated(versions)
    terminating = any(
        c.get("type") == "Terminating" and c.get("status") == "True" for c in status.get("conditions") or []
    )
    resources = []
    for version in versions:
        if version.get("served"):
            resources.append(_resource(crd["metadata"]["name"], spec, names, version, storage, newest, terminating))
    return resources


def _newest_undeprecated(versions: list[dict[str, Any]]) -> str:
    candidates = [v["name"] for v in versions if v.get("served") and not v.get("deprecated")]
    return sorted(candidates, key=version_order)[0] if candidates else ""


def _resource(
    crd: str,
    spec: dict[str, Any],
    names: dict[str, Any],
    version: dict[str, Any],
    storage: str,
    newest: str,
    terminating: bool,
) -> Resource:
    group, kind = spec["group"], names["kind"]
    gvk = GroupVersionKind(group, version["name"], kind)
    props = ((version.get("schema") or {}).get("openAPIV3Schema")) or {"type": "object"}
    subresources: dict[str, Subresource] = {}
    declared = version.get("subresources") or {}
    scale = None
    if "status" in declared:
        subresources["status"] = Subresource("status", gvk, "", SUBRESOURCE_VERBS)
    if "scale" in declared:
        subresources["scale"] = Subresource("scale", SCALE, SCALE_MESSAGE, SUBRESOURCE_VERBS)
        paths = declared["scale"] or {}
        scale = ScalePaths(
            paths.get("specReplicasPath", ".spec.replicas").lstrip("."),
            paths.get("statusReplicasPath", ".status.replicas").lstrip("."),
            (paths.get("labelSelectorPath") or "").lstrip("."),
        )
    warning = ""
    if version.get("deprecated"):
        warning = version.get("deprecationWarning") or f"{group}/{version['name']} {kind} is deprecated"
        if not version.get("deprecationWarning") and newest:
            warning += f"; use {group}/{newest} {kind}"
    extension = CustomVersion(
        crd,
        Structural.from_props(props),
        props,
        GroupVersionKind(group, storage, kind),
        scale,
        warning,
        WebhookConversion.of(spec.get("conversion") or {}),
        terminating,
    )
    return Resource(
        gvk=gvk,
        plural=names["plural"],
        singular=names.get("singular") or kind.lower(),
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        verbs=VERBS,
        subresources=subresources,
        printer_columns=_columns(version),
        selectable_fields=(
            "metadata.name",
            "metadata.namespace",
            *(f["jsonPath"].lstrip(".") for f in version.get("selectableFields") or ()),
        ),
        storage_prefix=f"{group}/{names['plural']}",
        name_rule=0,
        allow_create_on_update=False,
        return_deleted_object=False,
        storage_kind=None,
        message="",
        list_message="",
        extension=extension,
    )


def _columns(version: dict[str, Any]) -> tuple[PrinterColumn, ...]:
    """Name, then the additionalPrinterColumns; with none, upstream's Name and Created At (empty:
    the table printer's defaults)."""
    declared = version.get("additionalPrinterColumns")
    if not declared:
        return ()
    columns = [
        PrinterColumn(
            c["name"],
            c["type"],
            c.get("format", ""),
            c.get("description") or COLUMN_DESCRIPTION + c["jsonPath"],
            c.get("priority", 0),
            c["jsonPath"],
            "",
        )
        for c in declared
    ]
    return (NAME_COLUMN, *columns)
