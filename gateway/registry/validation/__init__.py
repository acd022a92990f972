"""Validation of every object written: metadata (meta.py) and each kind's own rules (base.py).

One module per API group (core, apps, batch, ...) registers its validators with
``base.validator``. Every module of this package is imported here, so a new group's rules need
no other registration.
"""

from __future__ import annotations

import importlib
import pkgutil

from gateway.registry.validation.base import validate

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["validate"]
