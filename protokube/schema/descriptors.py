"""Loading the generated descriptors: every message the project defines, by full name.

All modules generated from proto/ (under gen/) are imported once, so the default descriptor pool
holds every message; nothing here lists them by hand.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path

from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message

import protokube.gen

GEN_DIR = Path(protokube.gen.__file__).resolve().parent


@functools.cache
def load_all() -> tuple[str, ...]:
    """Import every generated ``*_pb2`` module under gen/; returns their module names."""
    names = []
    for path in sorted(GEN_DIR.rglob("*_pb2.py")):
        module = ".".join((protokube.gen.__name__, *path.relative_to(GEN_DIR).with_suffix("").parts))
        importlib.import_module(module)
        names.append(module)
    return tuple(names)


def pool() -> descriptor_pool.DescriptorPool:
    load_all()
    return descriptor_pool.Default()


def descriptor(full_name: str) -> Descriptor:
    """The descriptor of a message by full name; KeyError when the project defines none."""
    try:
        return pool().FindMessageTypeByName(full_name)
    except KeyError:
        raise KeyError(f"no message {full_name!r} is defined under proto/") from None


@functools.cache
def message_class(full_name: str) -> type[Message]:
    return message_factory.GetMessageClass(descriptor(full_name))


def all_messages() -> list[Descriptor]:
    """Every top-level and nested message of every generated file, in file order."""
    result: list[Descriptor] = []

    def walk(desc: Descriptor) -> None:
        result.append(desc)
        for nested in desc.nested_types:
            walk(nested)

    for module in load_all():
        file_desc = importlib.import_module(module).DESCRIPTOR
        for desc in file_desc.message_types_by_name.values():
            walk(desc)
    return result
