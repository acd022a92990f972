from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as _types_pb2
from protokube.gen.protokube.options.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Gizmo(_message.Message):
    __slots__ = ("metadata", "spec", "status")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    metadata: _types_pb2.ObjectMeta
    spec: GizmoSpec
    status: GizmoStatus
    def __init__(self, metadata: _Optional[_Union[_types_pb2.ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[GizmoSpec, _Mapping]] = ..., status: _Optional[_Union[GizmoStatus, _Mapping]] = ...) -> None: ...

class GizmoList(_message.Message):
    __slots__ = ("metadata", "items")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    metadata: _types_pb2.ListMeta
    items: _containers.RepeatedCompositeFieldContainer[Gizmo]
    def __init__(self, metadata: _Optional[_Union[_types_pb2.ListMeta, _Mapping]] = ..., items: _Optional[_Iterable[_Union[Gizmo, _Mapping]]] = ...) -> None: ...

class GizmoSpec(_message.Message):
    __slots__ = ("replicas", "selector", "image", "ports", "pod_labels")
    class PodLabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    PORTS_FIELD_NUMBER: _ClassVar[int]
    POD_LABELS_FIELD_NUMBER: _ClassVar[int]
    replicas: int
    selector: _types_pb2.LabelSelector
    image: str
    ports: _containers.RepeatedCompositeFieldContainer[GizmoPort]
    pod_labels: _containers.ScalarMap[str, str]
    def __init__(self, replicas: _Optional[int] = ..., selector: _Optional[_Union[_types_pb2.LabelSelector, _Mapping]] = ..., image: _Optional[str] = ..., ports: _Optional[_Iterable[_Union[GizmoPort, _Mapping]]] = ..., pod_labels: _Optional[_Mapping[str, str]] = ...) -> None: ...

class GizmoPort(_message.Message):
    __slots__ = ("name", "port")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    name: str
    port: int
    def __init__(self, name: _Optional[str] = ..., port: _Optional[int] = ...) -> None: ...

class GizmoStatus(_message.Message):
    __slots__ = ("replicas", "ready_replicas")
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    READY_REPLICAS_FIELD_NUMBER: _ClassVar[int]
    replicas: int
    ready_replicas: int
    def __init__(self, replicas: _Optional[int] = ..., ready_replicas: _Optional[int] = ...) -> None: ...

class GizmoClass(_message.Message):
    __slots__ = ("metadata", "default_image", "is_default")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_IMAGE_FIELD_NUMBER: _ClassVar[int]
    IS_DEFAULT_FIELD_NUMBER: _ClassVar[int]
    metadata: _types_pb2.ObjectMeta
    default_image: str
    is_default: bool
    def __init__(self, metadata: _Optional[_Union[_types_pb2.ObjectMeta, _Mapping]] = ..., default_image: _Optional[str] = ..., is_default: _Optional[bool] = ...) -> None: ...

class GizmoClassList(_message.Message):
    __slots__ = ("metadata", "items")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    metadata: _types_pb2.ListMeta
    items: _containers.RepeatedCompositeFieldContainer[GizmoClass]
    def __init__(self, metadata: _Optional[_Union[_types_pb2.ListMeta, _Mapping]] = ..., items: _Optional[_Iterable[_Union[GizmoClass, _Mapping]]] = ...) -> None: ...
