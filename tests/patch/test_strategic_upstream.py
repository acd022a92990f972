"""Strategic merge patch against upstream's own test tables (k8s.io/apimachinery/pkg/util/strategicpatch/
patch_test.go, transcribed in upstream_smp_cases.py), on a type tree of upstream's MergeItem test struct.

Upstream compares the raw cases' results as JSON bytes, so list order is checked exactly here too.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from protokube.gateway.errors import StatusError
from protokube.gateway.patch.dispatch import STRATEGIC_MERGE_PATCH, apply_patch
from tests.patch.schemas import MERGE_ITEM
from tests.patch.upstream_smp_cases import CUSTOM_RAW_CASES, CUSTOM_YAML, RAW_CASES


def load(text: str) -> Any:
    value = yaml.safe_load(text)
    return {} if value is None else value


def smp(original: Any, patch: Any) -> Any:
    return apply_patch(STRATEGIC_MERGE_PATCH, original, json.dumps(patch).encode(), MERGE_ITEM).object


@pytest.mark.parametrize(("original", "patch", "result"), [c[1:] for c in RAW_CASES], ids=[c[0] for c in RAW_CASES])
def test_raw_cases(original: str, patch: str, result: str) -> None:
    assert smp(load(original), load(patch)) == load(result)


@pytest.mark.parametrize(
    ("original", "patch", "result", "error"), [c[1:] for c in CUSTOM_RAW_CASES], ids=[c[0] for c in CUSTOM_RAW_CASES]
)
def test_custom_raw_cases(original: str, patch: str, result: str, error: str) -> None:
    if error:
        with pytest.raises(StatusError, match=error) as excinfo:
            smp(load(original), load(patch))
        assert excinfo.value.code == 500  # plain errors of strategicpatch: ErrorToAPIStatus's 500
    else:
        assert smp(load(original), load(patch)) == load(result)


CUSTOM = yaml.safe_load(CUSTOM_YAML)["testCases"]


@pytest.mark.parametrize("case", CUSTOM, ids=[c["description"] for c in CUSTOM])
def test_custom_cases(case: dict[str, Any]) -> None:
    """customStrategicMergePatchTestCaseData: the twoWay patch applied to original gives modified."""
    assert smp(case["original"], case["twoWay"]) == case["modified"]


def test_list_order_is_compared_exactly() -> None:
    """Dicts compare without order, lists with: a sanity check of the comparison the tables rely on."""
    assert smp(
        {"mergingList": [{"name": 1}, {"name": 2}]}, {"$setElementOrder/mergingList": [{"name": 2}, {"name": 1}]}
    ) == {"mergingList": [{"name": 2}, {"name": 1}]}
