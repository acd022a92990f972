"""Which garbage-collection finalizers a delete leaves on an object, in upstream's order of precedence:
orphanDependents, then propagationPolicy, then a finalizer already there, then the kind's default."""

from __future__ import annotations

import pytest

from protokube.gateway.params import DeleteOptions
from protokube.gateway.registry.deletion import BACKGROUND, ORPHAN, default_policy, deletion_finalizers

HOLD = "example.com/hold"


@pytest.mark.parametrize(
    ("finalizers", "options", "default", "expected"),
    [
        ([], DeleteOptions(), BACKGROUND, []),
        ([], DeleteOptions(), ORPHAN, ["orphan"]),
        ([HOLD], DeleteOptions(propagation_policy="Foreground"), ORPHAN, [HOLD, "foregroundDeletion"]),
        ([], DeleteOptions(propagation_policy="Background"), ORPHAN, []),
        (["orphan"], DeleteOptions(), BACKGROUND, ["orphan"]),  # a finalizer already there beats the default
        (["foregroundDeletion"], DeleteOptions(), ORPHAN, ["foregroundDeletion"]),
        (["orphan", HOLD], DeleteOptions(propagation_policy="Foreground"), BACKGROUND, [HOLD, "foregroundDeletion"]),
        (["foregroundDeletion"], DeleteOptions(orphan_dependents=True), BACKGROUND, ["orphan"]),
        (["orphan"], DeleteOptions(orphan_dependents=False), ORPHAN, []),
        ([HOLD, "orphan"], DeleteOptions(propagation_policy="Orphan"), BACKGROUND, [HOLD, "orphan"]),  # unchanged
    ],
)
def test_deletion_finalizers(finalizers: list[str], options: DeleteOptions, default: str, expected: list[str]) -> None:
    assert deletion_finalizers(finalizers, options, default) == expected


def test_default_policies_as_upstream_strategies() -> None:
    assert default_policy(("batch", "v1", "jobs")) == ORPHAN
    assert default_policy(("", "v1", "replicationcontrollers")) == ORPHAN
    for key in (("apps", "v1", "deployments"), ("apps", "v1", "replicasets"), ("batch", "v1", "cronjobs")):
        assert default_policy(key) == BACKGROUND
