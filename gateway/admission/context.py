"""What admission plugins are made from (chain.py makes them; plugins that build themselves from
it, as the webhook plugins do, take it without importing the chain)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from protokube.gateway.auth.authorization import Authorizer
from protokube.gateway.watchcache.cacher import Cacher
from protokube.schema.registry import Registry


@dataclass(frozen=True)
class PluginContext:
    """What plugins are made from. ``stores`` fills as the server serves resources: read it when a
    request comes, not when the plugin is made."""

    cachers: Mapping[tuple[str, str, str], Cacher]
    stores: Mapping[tuple[str, str, str], Any]
    authorizer: Authorizer
    registry: Registry  # the resources served (custom ones come and go)
    configuration: Mapping[str, Any] = field(default_factory=dict)  # by plugin name (--admission-control-config-file)

    def cacher(self, key: tuple[str, str, str]) -> Cacher | None:
        return self.cachers.get(key)
