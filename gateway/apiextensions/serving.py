"""Every gateway serves the resources of the established CustomResourceDefinitions in storage: an
informer on CRDs adds a run-time Resource per served version to the registry (routes, discovery,
OpenAPI and watch caches follow it), replaces them when the CRD changes, and removes them when the
CRD is gone. Only what the naming controller accepted is served (``status.acceptedNames``), and only
once the CRD is Established, as upstream's customresource handler serves."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import orjson

from protokube.gateway.apiextensions.served import resources_of
from protokube.gateway.objects.view import ObjectView
from protokube.schema.registry import Registry, RegistryError, Resource

log = logging.getLogger("protokube.apiextensions")


def established(crd: dict[str, Any]) -> bool:
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


class CustomResourceServing:
    """The informer sink that keeps the registry in step with the CRDs."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.served: dict[str, tuple[bytes, list[Resource]]] = {}  # CRD name → (what it said, its resources)

    def replace(self, views: Iterable[ObjectView]) -> None:
        crds = {view.obj.metadata.name: view.codec.to_dict(view.obj) for view in views}
        for name in [n for n in self.served if n not in crds]:
            self._withdraw(name)
        for name, crd in crds.items():
            self._serve(name, crd)

    def changed(self, event_type: str, view: ObjectView) -> None:
        name = view.obj.metadata.name
        if event_type == "DELETED":
            self._withdraw(name)
        else:
            self._serve(name, view.codec.to_dict(view.obj))

    def _serve(self, name: str, crd: dict[str, Any]) -> None:
        wanted = resources_of(crd) if established(crd) else []
        said = orjson.dumps([crd.get("spec"), (crd.get("status") or {}).get("acceptedNames"), bool(wanted)])
        if name in self.served and self.served[name][0] == said:
            terminating = any(r.extension.terminating for r in wanted)
            for resource in self.served[name][1]:
                resource.extension.terminating = terminating  # no new objects from now on
            return
        self._withdraw(name)
        added = []
        for resource in wanted:
            try:
                self.registry.add(resource)
            except RegistryError as err:  # a name the naming controller has not caught yet
                log.warning("customresourcedefinition %s: %s", name, err)
                continue
            added.append(resource)
        self.served[name] = (said, added)

    def _withdraw(self, name: str) -> None:
        _, resources = self.served.pop(name, (b"", []))
        for resource in resources:
            self.registry.remove(*resource.key)
