"""An OpenAPI v2 document as gnostic's ``openapi.v2.Document`` protobuf, as kube-apiserver serves it.

Mapped the way gnostic's compiler reads a Swagger 2.0 document: JSON keys to fields by name
(``operationId`` → ``operation_id``, ``$ref`` → ``_ref``), ``x-`` keys to ``vendor_extension``,
objects with free keys (definitions, properties, paths, responses ...) to lists of Named* pairs,
unions to their oneof member (a parameter by its ``in``, a reference by its ``$ref``), and any JSON
value (defaults, enums, extensions) to an ``Any`` holding its YAML text — here JSON, which YAML
reads as the same value.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

import protokube.gen.gnostic.openapiv2.OpenAPIv2_pb2 as oa

_CAMEL = re.compile(r"([A-Z])")
_NON_BODY = {
    "header": "header_parameter_sub_schema",
    "formData": "form_data_parameter_sub_schema",
    "query": "query_parameter_sub_schema",
    "path": "path_parameter_sub_schema",
}
_SECURITY = {
    "basic": "basic_authentication_security",
    "apiKey": "api_key_security",
    "implicit": "oauth2_implicit_security",
    "password": "oauth2_password_security",
    "application": "oauth2_application_security",
    "accessCode": "oauth2_access_code_security",
}


def document_bytes(document: dict[str, Any]) -> bytes:
    return _fill(oa.Document(), document).SerializeToString()


def _field_name(key: str) -> str:
    return "_ref" if key == "$ref" else _CAMEL.sub(r"_\1", key).lower()


def _any(value: Any) -> oa.Any:
    return oa.Any(yaml=orjson.dumps(value).decode())


def _fill(message: Message, obj: dict[str, Any]) -> Message:
    fields = message.DESCRIPTOR.fields_by_name
    for key, value in obj.items():
        if key.startswith("x-") and "vendor_extension" in fields:
            message.vendor_extension.add(name=key, value=_any(value))  # type: ignore[attr-defined]
            continue
        fd = fields.get(_field_name(key))
        if fd is not None:
            _set(message, fd, value)
    return message


def _set(message: Message, fd: FieldDescriptor, value: Any) -> None:
    if fd.message_type is None:
        if fd.is_repeated:
            getattr(message, fd.name).extend(value)
        else:
            setattr(message, fd.name, value)
        return
    if fd.is_repeated:
        getattr(message, fd.name).extend(_convert(fd.message_type.name, item) for item in value)
    else:
        getattr(message, fd.name).CopyFrom(_convert(fd.message_type.name, value))


def _named(cls: type[Message], name: str, value: Any) -> Message:
    value_fd = cls.DESCRIPTOR.fields_by_name["value"]
    converted = value if value_fd.message_type is None else _convert(value_fd.message_type.name, value)
    return cls(name=name, value=converted)


def _convert(type_name: str, value: Any) -> Message:
    """The message of a gnostic type from the JSON value in its place."""
    cls = getattr(oa, type_name)
    if type_name == "Any":
        return _any(value)
    if type_name == "ParametersItem":
        if "$ref" in value:
            return cls(json_reference=_fill(oa.JsonReference(), value))
        return cls(parameter=_convert("Parameter", value))
    if type_name == "Parameter":
        if value.get("in") == "body":
            return cls(body_parameter=_fill(oa.BodyParameter(), value))
        return cls(non_body_parameter=_convert("NonBodyParameter", value))
    if type_name == "NonBodyParameter":
        member = _NON_BODY[value["in"]]
        sub_type = cls.DESCRIPTOR.fields_by_name[member].message_type.name
        return cls(**{member: _fill(getattr(oa, sub_type)(), value)})
    if type_name == "ResponseValue":
        if "$ref" in value:
            return cls(json_reference=_fill(oa.JsonReference(), value))
        return cls(response=_fill(oa.Response(), value))
    if type_name == "SchemaItem":
        if value.get("type") == "file":
            return cls(file_schema=_fill(oa.FileSchema(), value))
        return cls(schema=_fill(oa.Schema(), value))
    if type_name == "AdditionalPropertiesItem":
        if isinstance(value, bool):
            return cls(boolean=value)
        return cls(schema=_fill(oa.Schema(), value))
    if type_name == "TypeItem":
        return cls(value=[value] if isinstance(value, str) else value)
    if type_name == "ItemsItem":
        items = value if isinstance(value, list) else [value]
        return cls(schema=[_fill(oa.Schema(), item) for item in items])
    if type_name == "StringArray":
        return cls(value=value)
    if type_name == "SecurityDefinitionsItem":
        member = _SECURITY[value.get("flow", value.get("type"))]
        sub_type = cls.DESCRIPTOR.fields_by_name[member].message_type.name
        return cls(**{member: _fill(getattr(oa, sub_type)(), value)})
    if type_name == "Paths":
        paths = cls()
        for key, item in value.items():
            if key.startswith("x-"):
                paths.vendor_extension.add(name=key, value=_any(item))
            else:
                paths.path.append(_named(oa.NamedPathItem, key, item))
        return paths
    if type_name == "Responses":
        responses = cls()
        for key, item in value.items():
            if key.startswith("x-"):
                responses.vendor_extension.add(name=key, value=_any(item))
            else:
                responses.response_code.append(_named(oa.NamedResponseValue, key, item))
        return responses
    fields = cls.DESCRIPTOR.fields_by_name
    if list(fields) == ["additional_properties"]:
        named = fields["additional_properties"].message_type.name
        return cls(additional_properties=[_named(getattr(oa, named), k, v) for k, v in value.items()])
    return _fill(cls(), value)
