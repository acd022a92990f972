from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Scope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCOPE_UNSPECIFIED: _ClassVar[Scope]
    SCOPE_NAMESPACED: _ClassVar[Scope]
    SCOPE_CLUSTER: _ClassVar[Scope]

class NameRule(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NAME_RULE_UNSPECIFIED: _ClassVar[NameRule]
    NAME_RULE_DNS1123_LABEL: _ClassVar[NameRule]
    NAME_RULE_DNS1035_LABEL: _ClassVar[NameRule]
    NAME_RULE_PATH_SEGMENT: _ClassVar[NameRule]

class ListType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LIST_TYPE_UNSPECIFIED: _ClassVar[ListType]
    LIST_TYPE_ATOMIC: _ClassVar[ListType]
    LIST_TYPE_SET: _ClassVar[ListType]
    LIST_TYPE_MAP: _ClassVar[ListType]

class Granularity(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GRANULARITY_UNSPECIFIED: _ClassVar[Granularity]
    GRANULARITY_ATOMIC: _ClassVar[Granularity]
    GRANULARITY_GRANULAR: _ClassVar[Granularity]
SCOPE_UNSPECIFIED: Scope
SCOPE_NAMESPACED: Scope
SCOPE_CLUSTER: Scope
NAME_RULE_UNSPECIFIED: NameRule
NAME_RULE_DNS1123_LABEL: NameRule
NAME_RULE_DNS1035_LABEL: NameRule
NAME_RULE_PATH_SEGMENT: NameRule
LIST_TYPE_UNSPECIFIED: ListType
LIST_TYPE_ATOMIC: ListType
LIST_TYPE_SET: ListType
LIST_TYPE_MAP: ListType
GRANULARITY_UNSPECIFIED: Granularity
GRANULARITY_ATOMIC: Granularity
GRANULARITY_GRANULAR: Granularity
KIND_FIELD_NUMBER: _ClassVar[int]
kind: _descriptor.FieldDescriptor
RESOURCE_FIELD_NUMBER: _ClassVar[int]
resource: _descriptor.FieldDescriptor
ATOMIC_FIELD_NUMBER: _ClassVar[int]
atomic: _descriptor.FieldDescriptor
FIELD_FIELD_NUMBER: _ClassVar[int]
field: _descriptor.FieldDescriptor

class Kind(_message.Message):
    __slots__ = ("group", "version")
    GROUP_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    group: str
    version: str
    def __init__(self, group: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class Subresource(_message.Message):
    __slots__ = ("name", "kind", "verbs")
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    VERBS_FIELD_NUMBER: _ClassVar[int]
    name: str
    kind: str
    verbs: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ..., verbs: _Optional[_Iterable[str]] = ...) -> None: ...

class PrinterColumn(_message.Message):
    __slots__ = ("name", "type", "format", "description", "priority", "json_path", "cell")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    JSON_PATH_FIELD_NUMBER: _ClassVar[int]
    CELL_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: str
    format: str
    description: str
    priority: int
    json_path: str
    cell: str
    def __init__(self, name: _Optional[str] = ..., type: _Optional[str] = ..., format: _Optional[str] = ..., description: _Optional[str] = ..., priority: _Optional[int] = ..., json_path: _Optional[str] = ..., cell: _Optional[str] = ...) -> None: ...

class Resource(_message.Message):
    __slots__ = ("plural", "singular", "short_names", "categories", "scope", "verbs", "subresources", "printer_columns", "selectable_fields", "storage_prefix", "name_rule", "allow_create_on_update", "return_deleted_object", "storage_kind")
    PLURAL_FIELD_NUMBER: _ClassVar[int]
    SINGULAR_FIELD_NUMBER: _ClassVar[int]
    SHORT_NAMES_FIELD_NUMBER: _ClassVar[int]
    CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    VERBS_FIELD_NUMBER: _ClassVar[int]
    SUBRESOURCES_FIELD_NUMBER: _ClassVar[int]
    PRINTER_COLUMNS_FIELD_NUMBER: _ClassVar[int]
    SELECTABLE_FIELDS_FIELD_NUMBER: _ClassVar[int]
    STORAGE_PREFIX_FIELD_NUMBER: _ClassVar[int]
    NAME_RULE_FIELD_NUMBER: _ClassVar[int]
    ALLOW_CREATE_ON_UPDATE_FIELD_NUMBER: _ClassVar[int]
    RETURN_DELETED_OBJECT_FIELD_NUMBER: _ClassVar[int]
    STORAGE_KIND_FIELD_NUMBER: _ClassVar[int]
    plural: str
    singular: str
    short_names: _containers.RepeatedScalarFieldContainer[str]
    categories: _containers.RepeatedScalarFieldContainer[str]
    scope: Scope
    verbs: _containers.RepeatedScalarFieldContainer[str]
    subresources: _containers.RepeatedCompositeFieldContainer[Subresource]
    printer_columns: _containers.RepeatedCompositeFieldContainer[PrinterColumn]
    selectable_fields: _containers.RepeatedScalarFieldContainer[str]
    storage_prefix: str
    name_rule: NameRule
    allow_create_on_update: bool
    return_deleted_object: bool
    storage_kind: str
    def __init__(self, plural: _Optional[str] = ..., singular: _Optional[str] = ..., short_names: _Optional[_Iterable[str]] = ..., categories: _Optional[_Iterable[str]] = ..., scope: _Optional[_Union[Scope, str]] = ..., verbs: _Optional[_Iterable[str]] = ..., subresources: _Optional[_Iterable[_Union[Subresource, _Mapping]]] = ..., printer_columns: _Optional[_Iterable[_Union[PrinterColumn, _Mapping]]] = ..., selectable_fields: _Optional[_Iterable[str]] = ..., storage_prefix: _Optional[str] = ..., name_rule: _Optional[_Union[NameRule, str]] = ..., allow_create_on_update: _Optional[bool] = ..., return_deleted_object: _Optional[bool] = ..., storage_kind: _Optional[str] = ...) -> None: ...

class Field(_message.Message):
    __slots__ = ("nullable", "emit_empty", "patch_strategy", "patch_merge_key", "list_type", "list_map_keys", "granularity", "inline", "required", "default_json", "enum")
    NULLABLE_FIELD_NUMBER: _ClassVar[int]
    EMIT_EMPTY_FIELD_NUMBER: _ClassVar[int]
    PATCH_STRATEGY_FIELD_NUMBER: _ClassVar[int]
    PATCH_MERGE_KEY_FIELD_NUMBER: _ClassVar[int]
    LIST_TYPE_FIELD_NUMBER: _ClassVar[int]
    LIST_MAP_KEYS_FIELD_NUMBER: _ClassVar[int]
    GRANULARITY_FIELD_NUMBER: _ClassVar[int]
    INLINE_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_JSON_FIELD_NUMBER: _ClassVar[int]
    ENUM_FIELD_NUMBER: _ClassVar[int]
    nullable: bool
    emit_empty: bool
    patch_strategy: str
    patch_merge_key: str
    list_type: ListType
    list_map_keys: _containers.RepeatedScalarFieldContainer[str]
    granularity: Granularity
    inline: bool
    required: bool
    default_json: str
    enum: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, nullable: _Optional[bool] = ..., emit_empty: _Optional[bool] = ..., patch_strategy: _Optional[str] = ..., patch_merge_key: _Optional[str] = ..., list_type: _Optional[_Union[ListType, str]] = ..., list_map_keys: _Optional[_Iterable[str]] = ..., granularity: _Optional[_Union[Granularity, str]] = ..., inline: _Optional[bool] = ..., required: _Optional[bool] = ..., default_json: _Optional[str] = ..., enum: _Optional[_Iterable[str]] = ...) -> None: ...
