"""--controllers as kube-controller-manager reads it: '*' for the controllers on by default, NAME and
-NAME, the first mention deciding, the older short names taken, unknown names refused."""

from __future__ import annotations

import pytest

from protokube.gateway.controllers import selection
from protokube.gateway.controllers.selection import ControllerSelection


def test_by_default_every_controller_runs() -> None:
    assert all(selection.DEFAULT.enabled(name) for name in selection.KNOWN)


def test_a_controller_left_out() -> None:
    chosen = ControllerSelection.parse("*,-root-ca-certificate-publisher-controller")
    assert not chosen.enabled(selection.ROOT_CA_PUBLISHER)
    assert chosen.enabled(selection.SERVICE_ACCOUNT) and chosen.enabled(selection.NAMESPACE)


def test_without_a_star_only_the_named_run() -> None:
    chosen = ControllerSelection.parse("namespace-controller, serviceaccount")  # a short name, spaces
    assert chosen.enabled(selection.NAMESPACE) and chosen.enabled(selection.SERVICE_ACCOUNT)
    assert not chosen.enabled(selection.GARBAGE_COLLECTOR)


def test_the_first_mention_decides() -> None:
    assert not ControllerSelection.parse("-garbagecollector,*,garbage-collector-controller").enabled(
        selection.GARBAGE_COLLECTOR
    )
    assert ControllerSelection.parse("serviceaccount-controller,-serviceaccount").enabled(selection.SERVICE_ACCOUNT)


@pytest.mark.parametrize("text", ["*,-node-lifecycle-controller", "nope", "*,-"])
def test_unknown_names_are_refused(text: str) -> None:
    name = text.rpartition(",")[2].removeprefix("-")
    with pytest.raises(ValueError, match=f'^"{name}" is not in the list of known controllers$'):
        ControllerSelection.parse(text)
