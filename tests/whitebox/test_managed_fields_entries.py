"""The managedFields entries a write records are made directly from managedfields.encode's values
(gateway/registry/ownership.py), as the JSON decoder made them before: the same messages, byte for byte."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from protokube.gateway.objects.unstructured import OBJECT_META
from protokube.gateway.registry.ownership import _entry
from protokube.schema import jsondecode

VALUES: dict[str, list[Any]] = {
    "manager": ["kubectl", "a\u00e9\u4e2d", "x" * 300],
    "operation": ["Apply", "Update"],
    "apiVersion": ["v1", "apps/v1"],
    "time": ["2024-01-02T03:04:05Z", "1999-12-31T23:59:59Z"],
    "fieldsType": ["FieldsV1"],
    "fieldsV1": [{}, {"f:data": {".": {}, "f:k": {}}}, {"f:metadata": {"f:labels": {'f:a"b': {}}}}],
    "subresource": ["status", "scale"],
}


def entries() -> list[dict[str, Any]]:
    """Each field absent or with each of its values, over a spread of combinations."""
    names = list(VALUES)
    out = []
    for present in itertools.product((False, True), repeat=len(names)):
        entry = {}
        for i, (name, there) in enumerate(zip(names, present, strict=True)):
            if there:
                options = VALUES[name]
                entry[name] = options[(len(out) + i) % len(options)]
        out.append(entry)
    return out


@pytest.mark.parametrize("values", entries(), ids=lambda v: ",".join(v) or "empty")
def test_an_entry_is_what_the_json_decoder_made(values: dict[str, Any]) -> None:
    decoded = jsondecode.decode({"managedFields": [values]}, OBJECT_META).message.managedFields[0]
    made = _entry(values)
    assert made == decoded
    assert made.SerializeToString(deterministic=True) == decoded.SerializeToString(deterministic=True)
