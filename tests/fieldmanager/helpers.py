"""Shared builders for the field manager tests: hand-made types (as structured-merge-diff's test
schemas declare them) and a small state machine like structured-merge-diff's internal/fixture."""

from __future__ import annotations

from typing import Any

import yaml

from protokube.gateway.fieldmanager.fieldpath import Set, make_path
from protokube.gateway.fieldmanager.merge import Conflicts, ManagedFields, Updater, VersionedSet
from protokube.gateway.fieldmanager.typed import MISSING
from protokube.schema.typetree import ASSOCIATIVE, ATOMIC, LIST, MAP, SCALAR, SET, STRUCT, UNTYPED, Field, Type

NUMERIC = Type(SCALAR, scalar="number")
STRING = Type(SCALAR, scalar="string")
BOOLEAN = Type(SCALAR, scalar="boolean")
UNTYPED_T = Type(UNTYPED)


def struct(atomic: bool = False, **fields: Type) -> Type:
    return Type(STRUCT, atomic=atomic, _fields={k: Field(k, v) for k, v in fields.items()})


def map_of(element: Type, atomic: bool = False) -> Type:
    return Type(MAP, element=element, atomic=atomic)


def map_list(element: Type, *keys: str) -> Type:
    return Type(LIST, element=element, list_type=ASSOCIATIVE, map_keys=keys)


def set_list(element: Type) -> Type:
    return Type(LIST, element=element, list_type=SET)


def atomic_list(element: Type) -> Type:
    return Type(LIST, element=element, list_type=ATOMIC)


def y(text: str) -> Any:
    """A YAML document as structured-merge-diff's tests write objects (empty: null)."""
    return yaml.safe_load(text) if text.strip() else None


def P(*parts: Any) -> tuple:
    return make_path(*parts)


def NS(*paths: tuple) -> Set:
    return Set.of(*paths)


class State:
    """structured-merge-diff's fixture.State: a live object and its managers under one Updater."""

    def __init__(self, t: Type, reset: Set | None = None):
        self.updater = Updater(t, reset)
        self.live: Any = None
        self.managers: ManagedFields = {}

    def update(self, obj: str, manager: str, version: str = "v1") -> None:
        new = y(obj)
        self.live, self.managers = self.updater.update(self.live, new, version, dict(self.managers), manager)

    def apply(self, obj: str, manager: str, version: str = "v1", force: bool = False) -> None:
        new, managers = self.updater.apply(self.live, y(obj), version, dict(self.managers), manager, force)
        self.managers = managers
        if new is not MISSING:
            self.live = new

    def force_apply(self, obj: str, manager: str, version: str = "v1") -> None:
        self.apply(obj, manager, version, force=True)

    def conflicts(self, obj: str, manager: str, version: str = "v1") -> list[tuple[str, tuple]]:
        try:
            self.apply(obj, manager, version)
        except Conflicts as c:
            return c.conflicts
        raise AssertionError("expected conflicts")

    def managed(self) -> dict[str, tuple[Set, str]]:
        """Managers as upstream's tests compare them (ManagedFields.Difference ignores Applied)."""
        return {m: (vs.set, vs.api_version) for m, vs in self.managers.items()}


def vs(s: Set, version: str = "v1", applied: bool = False) -> VersionedSet:
    return VersionedSet(s, version, applied)
