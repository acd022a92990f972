"""RuntimeClass's merge of a pod's tolerations with its class's (upstream's MergeTolerations): a
toleration another one tolerates a superset of is left out; of equal ones the first stays."""

from __future__ import annotations

from typing import Any

import pytest

from protokube.gateway.admission.runtimeclass import merge_tolerations
from protokube.gen.k8s.io.api.core.v1 import types_pb2 as core


def toleration(**fields: Any) -> core.Toleration:
    return core.Toleration(**fields)


EXISTS_ALL = toleration(operator="Exists")
FOO_EXISTS = toleration(key="foo", operator="Exists")
FOO_BAR = toleration(key="foo", operator="Equal", value="bar")
FOO_BAR_NO_SCHEDULE = toleration(key="foo", operator="Equal", value="bar", effect="NoSchedule")
FOO_BAZ = toleration(key="foo", operator="Equal", value="baz")
NO_EXECUTE_60 = toleration(key="foo", operator="Exists", effect="NoExecute", tolerationSeconds=60)
NO_EXECUTE_30 = toleration(key="foo", operator="Exists", effect="NoExecute", tolerationSeconds=30)
NO_EXECUTE_FOREVER = toleration(key="foo", operator="Exists", effect="NoExecute")


@pytest.mark.parametrize(
    ("first", "second", "merged"),
    [
        ([FOO_BAR], [FOO_BAZ], [FOO_BAR, FOO_BAZ]),  # different values: both
        ([FOO_BAR_NO_SCHEDULE], [FOO_BAR], [FOO_BAR]),  # no effect tolerates every effect
        ([FOO_BAR, FOO_BAZ], [FOO_EXISTS], [FOO_EXISTS]),  # Exists tolerates every value
        ([FOO_BAR], [EXISTS_ALL], [EXISTS_ALL]),  # an empty key with Exists tolerates everything
        ([FOO_BAR], [FOO_BAR], [FOO_BAR]),  # equal ones: once
        ([NO_EXECUTE_30], [NO_EXECUTE_60], [NO_EXECUTE_60]),  # a longer time tolerates a shorter one
        ([NO_EXECUTE_60], [NO_EXECUTE_FOREVER], [NO_EXECUTE_FOREVER]),
        ([NO_EXECUTE_FOREVER], [NO_EXECUTE_60], [NO_EXECUTE_FOREVER]),
        ([FOO_BAR], [], [FOO_BAR]),
    ],
)
def test_merge_tolerations(
    first: list[core.Toleration], second: list[core.Toleration], merged: list[core.Toleration]
) -> None:
    assert merge_tolerations([*first, *second]) == merged


def test_an_empty_operator_is_equal_only_on_the_wider_side() -> None:
    """As upstream's isSuperset: a toleration whose operator is left empty tolerates what an Equal one
    of the same key and value does, but an Equal one is not taken to tolerate it."""
    unset = toleration(key="foo", value="bar")
    assert merge_tolerations([unset, FOO_BAR]) == [unset]
    assert merge_tolerations([FOO_BAR, unset]) == [unset]
