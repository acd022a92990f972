"""Every API group's validators, registered by importing each module of this package."""

from __future__ import annotations

import importlib
import pkgutil

import protokube.gateway.registry.validation as package
from protokube.gateway.registry.validation.base import validate

for _module in pkgutil.iter_modules(package.__path__):
    importlib.import_module(f"{package.__name__}.{_module.name}")

__all__ = ["validate"]
