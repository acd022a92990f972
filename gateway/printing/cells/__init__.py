"""Table cells that need logic, by the names printer columns give in their ``cell`` option.

One module per API group (core, apps, ...); each registers its cells with ``base.cell``. Every
module of this package is imported here, so a new group's cells need no other registration.
"""

from __future__ import annotations

import importlib
import pkgutil

from protokube.gateway.printing.cells.base import CELLS, ROW_CONDITIONS, Row

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["CELLS", "ROW_CONDITIONS", "Row"]
