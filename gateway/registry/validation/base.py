"""Upstream's per-kind validation (k8s.io/kubernetes pkg/apis/<group>/validation): a kind's
``Validate<Kind>`` and ``Validate<Kind>Update`` rules, registered with ``@validator("<message
full name>")`` by one module per group in this package, and by the layers above for the kinds whose
rules need what they own (CEL, structural schemas, APF's bounds: admission/webhook/validation.py,
admission/policy/validation.py, apiextensions/validation.py, flowcontrol/validation.py), which the
composition root (gateway/app.py) imports: the table is handed down, never imported up.

A validator gets the new object and, on update, the stored one (``None`` on create), and returns
every problem as a ``FieldError`` with upstream's type, path and detail; the store answers them
all in one 422 Invalid. Metadata rules every kind shares live in meta.py and run first.
"""

from __future__ import annotations

from collections.abc import Callable

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError

Validator = Callable[[Message, Message | None], list[FieldError]]
# The validators of each kind, by its message full name, in registration order.
VALIDATORS: dict[str, list[Validator]] = {}


def validator(full_name: str) -> Callable[[Validator], Validator]:
    """Register a function validating objects of the kind ``full_name`` (new, old or None)."""

    def register(func: Validator) -> Validator:
        VALIDATORS.setdefault(full_name, []).append(func)
        return func

    return register


def validate(obj: Message, old: Message | None) -> list[FieldError]:
    """Every problem the kind's validators find in ``obj`` (``old``: the stored object on update)."""
    found: list[FieldError] = []
    for func in VALIDATORS.get(obj.DESCRIPTOR.full_name, ()):
        found += func(obj, old)
    return found
