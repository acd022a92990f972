"""Maintenance of the bootstrap configuration (k8s.io/kubernetes pkg/registry/flowcontrol/ensurer),
run at start and every minute.

- Mandatory objects (``exempt``, ``catch-all``) are recreated when deleted and their spec is put
  back whatever the operator did (but for the ``exempt`` level's ``spec.exempt``, which is theirs).
- Suggested objects are created when missing; an existing one gets the bootstrap spec back only
  while it lets the server update it: annotation ``apf.kubernetes.io/autoupdate-spec: "true"``,
  or, without a boolean annotation, ``metadata.generation == 1`` (nobody edited it). The
  annotation is then set to what was decided.
- Objects with the annotation that are no longer part of the bootstrap set are deleted when it
  says "true".
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from protokube.gateway.errors import StatusError
from protokube.gateway.flowcontrol.bootstrap import (
    AUTO_UPDATE,
    EXEMPT,
    MANDATORY_LEVELS,
    MANDATORY_SCHEMAS,
    SUGGESTED_LEVELS,
    SUGGESTED_SCHEMAS,
    Spec,
)
from protokube.gateway.params import DeleteOptions, ListOptions, WriteOptions
from protokube.gateway.registry.store import Store
from protokube.gateway.storage.backend import StorageError

log = logging.getLogger("protokube.flowcontrol")
FIELD_MANAGER = "api-priority-and-fairness-config-producer-v1"
MAINTENANCE_PERIOD = 60.0


def parse_bool(value: str | None) -> bool | None:
    """Go's strconv.ParseBool, None for anything else."""
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def auto_update_spec(obj: Any) -> bool:
    """Whether the server may put a suggested object's spec back (upstream's shouldUpdateSpec)."""
    decided = parse_bool(obj.metadata.annotations.get(AUTO_UPDATE))
    if decided is not None:
        return decided
    return obj.metadata.generation == 1


class Kind:
    """One of the two kinds: its store and its mandatory and suggested objects by name."""

    def __init__(self, store: Store, mandatory: dict[str, Spec], suggested: dict[str, Spec]) -> None:
        self.store = store
        self.mandatory = mandatory
        self.suggested = suggested

    def desired(self, name: str, spec: Spec) -> Any:
        """The bootstrap object, defaulted as a stored one is (to compare specs)."""
        data = {"metadata": {"name": name, "annotations": {AUTO_UPDATE: "true"}}, "spec": spec}
        obj = self.store.codec.from_dict(data).obj
        self.store.strategy.default(obj)
        return obj

    async def ensure(self, name: str, spec: Spec, always: bool) -> None:
        store = self.store
        options = WriteOptions(field_manager=FIELD_MANAGER)
        desired = self.desired(name, spec)
        try:
            current = (await store.get("", name, None)).obj
            if (
                name == EXEMPT
                and "exempt" in desired.spec.DESCRIPTOR.fields_by_name
                and current.spec.HasField("exempt")
            ):
                desired.spec.exempt.CopyFrom(current.spec.exempt)
        except StatusError as err:
            if err.status.code != 404:
                raise
            try:
                await store.create("", desired, options)
                log.info("created %s %s", store.resource.kind, name)
            except StatusError as create_err:
                if create_err.status.code != 409:  # another gateway was quicker
                    raise
            return
        update_spec = always or auto_update_spec(current)
        annotation = "true" if update_spec else "false"
        spec_differs = update_spec and current.spec != desired.spec
        if current.metadata.annotations.get(AUTO_UPDATE) == annotation and not spec_differs:
            return

        def updated(stored: Any) -> Any:
            new = store.codec.copy(stored)
            new.metadata.annotations[AUTO_UPDATE] = annotation
            if spec_differs:
                new.spec.CopyFrom(desired.spec)
            return new

        await store.update("", name, updated, options)
        log.info("updated %s %s", store.resource.kind, name)

    async def remove_stale(self) -> None:
        """Delete auto-updated objects that are no longer part of the bootstrap configuration."""
        known = self.mandatory.keys() | self.suggested.keys()
        for view in (await self.store.list("", ListOptions())).items:
            meta = view.obj.metadata
            if meta.name in known or AUTO_UPDATE not in meta.annotations:
                continue
            if parse_bool(meta.annotations[AUTO_UPDATE]):
                try:
                    await self.store.delete("", meta.name, DeleteOptions())
                except StatusError as err:
                    if err.status.code != 404:
                        raise

    async def maintain(self) -> None:
        # all at once: storage commits them in a few batches (one commit each made a server's start slower)
        await asyncio.gather(
            *(self.ensure(name, spec, always=True) for name, spec in self.mandatory.items()),
            *(self.ensure(name, spec, always=False) for name, spec in self.suggested.items()),
        )
        await self.remove_stale()


class Maintenance:
    """Keeps the bootstrap configuration in storage: at start, then every ``period`` seconds."""

    def __init__(self, levels: Store, schemas: Store, period: float = MAINTENANCE_PERIOD) -> None:
        # Levels first: a FlowSchema made before its level would be Dangling for a moment.
        self.kinds = [
            Kind(levels, MANDATORY_LEVELS, SUGGESTED_LEVELS),
            Kind(schemas, MANDATORY_SCHEMAS, SUGGESTED_SCHEMAS),
        ]
        self.period = period
        self.done = asyncio.Event()  # the first round completed

    async def run_once(self) -> None:
        for kind in self.kinds:
            await kind.maintain()

    async def run(self) -> None:
        while True:
            try:
                await self.run_once()
                self.done.set()
                await asyncio.sleep(self.period)
            except (StatusError, StorageError) as err:
                log.warning("APF configuration not maintained yet: %s", err)
                await asyncio.sleep(1)
