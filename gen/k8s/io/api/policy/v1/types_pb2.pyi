from k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as _types_pb2
from protokube.options.v1 import options_pb2 as _options_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Eviction(_message.Message):
    __slots__ = ("metadata", "deleteOptions")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    DELETEOPTIONS_FIELD_NUMBER: _ClassVar[int]
    metadata: _types_pb2.ObjectMeta
    deleteOptions: _types_pb2.DeleteOptions
    def __init__(self, metadata: _Optional[_Union[_types_pb2.ObjectMeta, _Mapping]] = ..., deleteOptions: _Optional[_Union[_types_pb2.DeleteOptions, _Mapping]] = ...) -> None: ...
