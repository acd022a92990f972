"""Small helpers the per-group defaulters share: Go's pointer and IntOrString idioms on protobuf
messages, and the image tag rule of imagePullPolicy."""

from __future__ import annotations

import math
import re
from fractions import Fraction

from google.protobuf.message import Message

from protokube.schema import quantity

# IntOrString's type field (intstr.Type).
INT, STRING = 0, 1


def set_int_or_string(target: Message, value: int | str) -> None:
    """Set an IntOrString message (intstr.FromInt32 / intstr.FromString)."""
    target.Clear()
    if isinstance(value, str):
        target.type, target.strVal = STRING, value
    else:
        target.type, target.intVal = INT, value


def is_zero_int_or_string(value: Message) -> bool:
    """Whether an IntOrString is Go's zero value: int 0 or the empty string."""
    return value.strVal == "" if value.type == STRING else value.intVal == 0


def default(message: Message, name: str, value: object) -> None:
    """Go's ``if obj.X == nil { obj.X = &value }`` for an optional scalar field."""
    if not message.HasField(name):
        setattr(message, name, value)


def default_message(message: Message, name: str) -> Message:
    """``if obj.X == nil { obj.X = &T{} }`` for a message field; returns the field's message."""
    child = getattr(message, name)
    child.SetInParent()
    return child


def default_list(message: Message, name: str, values: list[str]) -> None:
    """``if len(obj.X) == 0 { obj.X = values }``."""
    items = getattr(message, name)
    if not items:
        items.extend(values)


# A docker image reference: [domain/]path[:tag][@digest] (distribution/reference's grammar).
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_DOMAIN = rf"(?:{_LABEL}(?:\.{_LABEL})*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?"
_REFERENCE = re.compile(
    rf"^(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*(?::(?P<tag>[\w][\w.-]{{0,127}}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$"
)


def image_tag(image: str) -> str:
    """The tag upstream's parsers.ParseImageName finds: the image's tag, ``latest`` when it has
    neither tag nor digest, "" for a digest alone or a reference that does not parse."""
    found = _REFERENCE.match(image)
    if found is None:
        return ""
    if found["tag"]:
        return found["tag"]
    return "" if found["digest"] else "latest"


def pull_policy(image: str) -> str:
    """imagePullPolicy's default: Always for the ``latest`` tag, else IfNotPresent."""
    return "Always" if image_tag(image) == "latest" else "IfNotPresent"


def round_up_to_milli(resources: Message, name: str) -> None:
    """upstream's SetDefaults_ResourceList: each quantity of a ResourceList rounded up to 1m."""
    for item in getattr(resources, name).values():
        try:
            value, family = quantity.parse(item.string)
        except quantity.QuantityError:
            continue  # validation reports it
        milli = value * 1000
        if milli.denominator != 1:
            rounded = Fraction(math.ceil(abs(milli)) * (1 if milli > 0 else -1), 1000)
            item.string = quantity.format_quantity(rounded, family)
