"""Where strategic merge patch finds a field's patch strategy and merge key: upstream's
PatchMetaFromStruct (k8s.io/apimachinery/pkg/util/strategicpatch/meta.go and the forked
encoding/json field lookup), answered from the type tree instead of Go struct tags.

Upstream only looks a key up when the current object and the patch both hold an object (or both a
list) under it, or for a ``$setElementOrder`` list; its errors name Go's reflect kinds and struct
names, reproduced here from the type tree (a Go pointer is not known to the tree: see
``lookup_slice``).
"""

from __future__ import annotations

from dataclasses import dataclass

from protokube.gateway.errors import go_quote
from protokube.gateway.patch.smperrors import internal
from protokube.schema.typetree import LIST, MAP, SCALAR, STRUCT, UNTYPED, Field, Type

_SCALAR_KINDS = {"string": "string", "integer": "int64", "number": "float64", "boolean": "bool"}
_TYPE_META = {name: Field(name, Type(SCALAR, scalar="string")) for name in ("kind", "apiVersion")}


@dataclass(frozen=True, slots=True)
class Meta:
    """A field's patch metadata: its strategy (retainKeys set aside) and merge key."""

    strategy: str
    merge_key: str


@dataclass(frozen=True, slots=True)
class Schema:
    """The type being merged; ``root`` for a kind (whose inline TypeMeta adds kind and apiVersion)."""

    type: Type
    root: bool = False

    def kind(self) -> str:
        """reflect.Kind of the Go type, as upstream's messages print it."""
        t = self.type
        if t.kind in (STRUCT, UNTYPED):
            return "struct"
        if t.kind == MAP:
            return "map"
        if t.kind == LIST:
            return "slice"
        return _SCALAR_KINDS.get(t.scalar, "struct")  # IntOrString, Quantity, Time are Go structs

    def struct_name(self) -> str:
        """reflect.Type.Name(): RawExtension and FieldsV1 are the untyped structs of built-in kinds."""
        return self.type.name.rsplit(".", 1)[-1] if self.type.name else "RawExtension"

    def _field(self, key: str) -> Field | None:
        fields = dict(self.type.fields) if self.type.kind == STRUCT else {}
        if self.root:
            fields = {**_TYPE_META, **fields}
        if key in fields:
            return fields[key]
        folded = key.lower()  # the forked encoding/json falls back to a case-insensitive match
        return next((f for name, f in fields.items() if name.lower() == folded), None)

    def lookup_struct(self, key: str) -> tuple[Schema, Meta]:
        """LookupPatchMetadataForStruct: the field's type and patch metadata."""
        if self.type.kind not in (STRUCT, UNTYPED):
            raise internal(f"merging an object in json but data type is not struct, instead is: {self.kind()}")
        found = self._field(key)
        if found is None:
            name = self.struct_name()
            raise internal(f"unable to find api field in struct {name} for the json field {go_quote(key)}")
        return Schema(found.type), Meta(_strategy(found.patch_strategy), found.patch_merge_key)

    def lookup_slice(self, key: str) -> tuple[Schema, Meta]:
        """LookupPatchMetadataForSlice: the element type of a list field and its patch metadata.

        Upstream also accepts a Go pointer field here (answering its element type); the type tree
        does not say which fields are pointers, so any non-list field is refused like a value one.
        """
        sub, meta = self.lookup_struct(key)
        if sub.type.kind != LIST:
            raise internal(f"expected slice or array type, but got: {self.kind()}")
        element = sub.type.element
        assert element is not None
        if element.kind == LIST:
            raise internal("unexpected slice of slice")
        return Schema(element), meta

    def element_name(self) -> str:
        """PatchMetaFromStruct.Name() of a list's element schema."""
        return self.kind()


def _strategy(strategies: frozenset[str]) -> str:
    """extractRetainKeysPatchStrategy: the strategy besides retainKeys ("" if none)."""
    others = sorted(strategies - {"retainKeys"})
    if len(strategies) > 2 or (len(strategies) == 2 and "retainKeys" not in strategies):
        raise internal("unexpected patch strategy: [" + " ".join(sorted(strategies)) + "]")
    return others[0] if others else ""
