"""Conversions between versions of one stored kind (base.py); one module per API group registers
its conversions, and every module of this package is imported here."""

from __future__ import annotations

import importlib
import pkgutil

from protokube.gateway.conversion.base import ConvertedCodec

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["ConvertedCodec"]
