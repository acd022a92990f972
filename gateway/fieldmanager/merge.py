"""Ownership bookkeeping for updates and applies (sigs.k8s.io/structured-merge-diff/v4/merge.Updater).

Managers are keyed by an opaque identifier (the field manager layer uses upstream's JSON
identifiers; tests may use plain names). Objects of every API version are treated as having the
same shape: protokube serves each kind at one version, so upstream's version conversion is the
identity here. A manager recorded at a version the server does not know is dropped, as upstream's
converter does (IsMissingVersionError), when ``known_versions`` is given.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from mypy_extensions import mypyc_attr

import protokube.gateway.fieldmanager.typed as typed
from protokube.gateway.fieldmanager.fieldpath import Path, Set
from protokube.gateway.fieldmanager.typed import Comparison
from protokube.gateway.fieldmanager.values import JSON, MISSING, equals
from protokube.schema.typetree import Type


# A plain class: a dataclass's generated ``__init__`` runs as Python, even compiled (README).
class VersionedSet:
    """upstream's fieldpath.VersionedSet: a manager's fields, at an API version, applied or updated."""

    def __init__(self, set: Set, api_version: str, applied: bool) -> None:
        self.set = set
        self.api_version = api_version
        self.applied = applied


ManagedFields = dict[str, VersionedSet]


class Conflicts(Exception):
    """upstream's merge.Conflicts: (manager, path) pairs, grouped by manager in sorted order."""

    def __init__(self, conflicts: list[tuple[str, Path]]):
        self.conflicts = conflicts
        super().__init__(f"{len(conflicts)} conflicts")

    @classmethod
    def from_managers(cls, sets: Mapping[str, Set]) -> Conflicts:
        """upstream's ConflictsFromManagers (managers in sorted order: upstream iterates a Go map)."""
        return cls([(manager, path) for manager in sorted(sets) for path in sets[manager].iterate()])

    def to_set(self) -> Set:
        return Set.of(*(path for _, path in self.conflicts))


@mypyc_attr(allow_interpreted_subclasses=True)  # handlers/patch.py's UpdaterApplier (tools/compile.py)
class Updater:
    """Computes managers' field sets on update, and merges and prunes on apply, for one type.

    ``reset``: the fields the strategy resets (upstream's IgnoreFilter, e.g. ``status`` for the main
    resource); they are never owned and never cause conflicts. Conversion between API versions is
    the identity, so the same reset fields hold at every version.
    """

    def __init__(self, obj_type: Type, reset: Set | None = None, known_versions: Collection[str] | None = None):
        self.type = obj_type
        self.reset = reset
        self.known_versions = known_versions

    def _known(self, version: str) -> bool:
        return self.known_versions is None or version in self.known_versions

    def _filter(self, s: Set) -> Set:
        return s if self.reset is None else s.recursive_difference(self.reset)

    def _reconcile(self, managers: ManagedFields) -> ManagedFields:
        """upstream's reconcileManagedFieldsWithSchemaChanges (managers at unknown versions drop out)."""
        out: ManagedFields = {}
        for manager, vs in managers.items():
            if not self._known(vs.api_version):
                continue
            reconciled = typed.reconcile_field_set(vs.set, self.type)
            out[manager] = vs if reconciled is None else VersionedSet(reconciled, vs.api_version, vs.applied)
        return out

    def _update(
        self, old: JSON, new: JSON, version: str, managers: ManagedFields, workflow: str, force: bool
    ) -> tuple[ManagedFields, Comparison]:
        """Other managers lose the fields this change modifies, adds or removes (conflicts unless
        ``force``). upstream: Updater.update."""
        comparison = typed.compare(old, new, self.type).filtered(self.reset)
        conflicts: dict[str, Set] = {}
        removed: dict[str, Set] = {}
        for manager, vs in list(managers.items()):
            if manager == workflow:
                continue
            if not self._known(vs.api_version):
                del managers[manager]
                continue
            conflict = vs.set.intersection(comparison.modified.union(comparison.added))
            if not conflict.empty():
                conflicts[manager] = conflict
            if not comparison.removed.empty():
                removed[manager] = comparison.removed
        if not force and conflicts:
            raise Conflicts.from_managers(conflicts)
        for manager, lost in (*conflicts.items(), *removed.items()):
            vs = managers[manager]
            managers[manager] = VersionedSet(vs.set.difference(lost), vs.api_version, vs.applied)
        for manager in [m for m, vs in managers.items() if vs.set.empty()]:
            del managers[manager]
        return managers, comparison

    def update(
        self, live: JSON, new: JSON, version: str, managers: ManagedFields, manager: str
    ) -> tuple[JSON, ManagedFields]:
        """After a create/update/patch: ``manager`` owns what it changed; others lose it.
        upstream: Updater.Update."""
        managers = self._reconcile(managers)
        managers, comparison = self._update(live, new, version, managers, manager, True)
        previous = managers.get(manager)
        fields = previous.set if previous is not None else Set()
        fields = fields.difference(comparison.removed).union(comparison.modified).union(comparison.added)
        fields = self._filter(fields)
        if fields.empty():
            managers.pop(manager, None)
        else:
            managers[manager] = VersionedSet(fields, version, False)
        return new, managers

    def apply(
        self, live: JSON, config: JSON, version: str, managers: ManagedFields, manager: str, force: bool
    ) -> tuple[JSON, ManagedFields]:
        """Merge an applied configuration; ``manager`` owns exactly what it applied. Returns MISSING as
        the object when it is unchanged. Raises Conflicts. upstream: Updater.Apply."""
        managers = self._reconcile(managers)
        merged = typed.merge(live, config, self.type)
        last = managers.get(manager)
        applied = self._filter(typed.to_field_set(config, self.type))
        managers[manager] = VersionedSet(applied, version, True)
        merged = self._prune(merged, managers, manager, last)
        managers, _ = self._update(live, merged, version, managers, manager, force)
        if equals(live, merged):
            merged = MISSING
        return merged, managers

    def _prune(self, merged: JSON, managers: ManagedFields, applier: str, last: VersionedSet | None) -> JSON:
        """Remove what ``applier`` applied last time and no longer applies, unless someone else owns
        it (upstream: prune, addBackOwnedItems, addBackDanglingItems)."""
        if last is None or last.set.empty() or not self._known(last.api_version):
            return merged
        t = self.type
        named = typed.ensure_named_fields_are_members
        pruned = typed.remove_items(merged, t, named(last.set, t))
        # Add back what anyone (the applier's new configuration included) owns.
        owned = Set()
        for vs in managers.values():
            if self._known(vs.api_version):
                owned = owned.union(vs.set)
        merged_set = named(typed.to_field_set(merged, t), t)
        kept = named(typed.to_field_set(pruned, t), t).union(named(owned, t))
        pruned = typed.remove_items(merged, t, merged_set.difference(kept))
        # Only remove what the applier itself owned before: unowned fields stay.
        pruned_set = named(typed.to_field_set(pruned, t), t)
        return typed.remove_items(merged, t, merged_set.difference(pruned_set).intersection(named(last.set, t)))
