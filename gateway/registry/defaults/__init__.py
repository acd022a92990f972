"""Upstream's defaults, applied to every object written (see base.py for how).

One module per API group (core, apps, batch, ...) registers its ``SetDefaults_<Type>`` functions
with ``base.defaulter``. Every module of this package is imported here, so a new group's
defaults need no other registration.
"""

from __future__ import annotations

import importlib
import pkgutil

from protokube.gateway.registry.defaults.base import apply_defaults

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["apply_defaults"]
