"""The order in which the workers of a parallel run take the modules.

``make test`` runs modules on two workers, a whole module per worker (``--dist loadfile``), in a random
order (pytest-randomly). A module that runs for minutes, drawn last, leaves one worker running it alone
while the other has nothing left: modules marked ``slow_module`` are therefore taken first (in their
random order), every other module after them as pytest-randomly ordered it; xdist keeps that order
(``--no-loadscope-reorder``: by default it orders modules by their number of tests).
"""

from __future__ import annotations

from collections.abc import Generator

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow_module: the module runs for minutes; parallel workers take it first")


@pytest.hookimpl(wrapper=True, tryfirst=True)  # around pytest-randomly's wrapper: after its shuffle
def pytest_collection_modifyitems(items: list[pytest.Item]) -> Generator[None, None, None]:
    yield
    items.sort(key=lambda item: item.get_closest_marker("slow_module") is None)  # stable: the order stays
