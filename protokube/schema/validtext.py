"""Text that every encoder accepts: valid Unicode, as Go makes invalid input valid.

Go's JSON decoder turns lone UTF-16 surrogate escapes into U+FFFD; its protobuf decoder keeps a
proto2 string's bytes as they are (and its JSON encoder writes invalid UTF-8 as U+FFFD). Python
would keep a lone surrogate in a str, or hand an invalid proto2 string back as bytes, and neither
survives being encoded again — so both become U+FFFD here, once, where they enter.
"""

from __future__ import annotations

import re
from typing import Final, TypeVar

from google.protobuf.message import Message

M = TypeVar("M", bound=Message)
_LONE_SURROGATE: Final = re.compile("[\\ud800-\\udfff]")


def valid_text(text: str) -> str:
    """A string without lone surrogates (each becomes U+FFFD)."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def with_valid_strings(message: M) -> M:
    """proto2 strings are not checked for UTF-8 on the wire (Go keeps any bytes, and writes invalid
    ones as U+FFFD in JSON); Python hands such strings back as bytes. Make them text the same way."""
    for fd, value in message.ListFields():
        if fd.type == fd.TYPE_STRING:
            if fd.is_repeated:
                fixed = [_text(v) for v in value]
                if fixed != list(value):
                    del value[:]
                    value.extend(fixed)
            elif isinstance(value, bytes):
                setattr(message, fd.name, _text(value))
        elif fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            key_fd, value_fd = fd.message_type.fields_by_name["key"], fd.message_type.fields_by_name["value"]
            if value_fd.type == value_fd.TYPE_MESSAGE:
                for item in value.values():
                    with_valid_strings(item)
            if key_fd.type == key_fd.TYPE_STRING or value_fd.type == value_fd.TYPE_STRING:
                items = [(_text(k), _text(v) if value_fd.type == value_fd.TYPE_STRING else v) for k, v in value.items()]
                if any(isinstance(k, bytes) or isinstance(v, bytes) for k, v in value.items()):
                    value.clear()
                    value.update(items)
        elif fd.type == fd.TYPE_MESSAGE:
            for item in value if fd.is_repeated else (value,):
                with_valid_strings(item)
    return message


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
