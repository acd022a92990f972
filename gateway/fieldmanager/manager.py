"""The field manager of one kind: managedFields on every write, and server-side apply.

This is upstream's default field manager chain (k8s.io/apimachinery/pkg/util/managedfields/internal,
NewDefaultFieldManager), outermost first:

    FieldManager            decode managedFields (live, or the new object's), encode the result
    versionCheck            apply: the applied object must be this kind
    lastAppliedUpdater      apply by "kubectl": keep the last-applied annotation up to date
    lastAppliedManager      apply by "kubectl": no conflicts on what kubectl applied client-side
    skipNonApplied          untracked objects stay untracked on update; "before-first-apply" on apply
    capManagers             at most 10 Update entries: the oldest merge into "ancient-changes"
    buildManagerInfo        the manager's identifier (name, operation, apiVersion, subresource)
    managedFieldsUpdater    the entry's time changes when the manager changed something
    stripMeta               apiVersion, kind and identity metadata are never owned
    structuredMerge         typed objects, Updater.update / Updater.apply

Objects are JSON dicts in the form the codec writes (Go's encoding of the kind: non-pointer structs
present, defaults applied). Inputs are never mutated; results may share unchanged parts with them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Final

import protokube.gateway.fieldmanager.lastapplied as lastapplied
import protokube.gateway.fieldmanager.managedfields as managedfields
import protokube.gateway.fieldmanager.schema as schema
import protokube.gateway.fieldmanager.typed as typed
from protokube.gateway import errors
from protokube.gateway.fieldmanager.conflict import conflict_error
from protokube.gateway.fieldmanager.fieldpath import Set, make_path
from protokube.gateway.fieldmanager.managedfields import APPLY, UPDATE, DecodeError, Managed
from protokube.gateway.fieldmanager.merge import Conflicts, Updater, VersionedSet
from protokube.gateway.fieldmanager.values import MISSING, equals
from protokube.schema import deep
from protokube.schema.shape import shape
from protokube.schema.typetree import Type

DEFAULT_MAX_UPDATE_MANAGERS: Final = 10  # internal.DefaultMaxUpdateManagers
ANCIENT_CHANGES: Final = "ancient-changes"  # capManagersManager.oldUpdatesManagerName
BEFORE_FIRST_APPLY: Final = "before-first-apply"  # skipNonAppliedManager.beforeApplyManagerName
_CURRENT_OPERATION: Final = "current-operation"  # managedFieldsUpdater's stand-in manager
_UNKNOWN_MANAGER: Final = "unknown"  # buildManagerInfo: an empty manager name

# stripMetaManager: fields that are never part of a manager's set.
_STRIPPED: Final = Set.of(
    make_path("apiVersion"),
    make_path("kind"),
    make_path("metadata"),
    *(
        make_path("metadata", name)
        for name in (
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "clusterName",
            "generation",
            "managedFields",
            "resourceVersion",
        )
    ),
)


@dataclass(frozen=True, slots=True)
class Unchanged:
    """An apply that changes nothing: the live object stays as it is (no write, no new resourceVersion)."""

    object: dict[str, Any]


class _Failed(Exception):
    """An error upstream's Update swallows (UpdateNoErrors: the object is written without managedFields)."""


def _metadata(obj: Any) -> dict[str, Any]:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def _with_managed_fields(obj: dict[str, Any], entries: list[dict[str, Any]] | None) -> dict[str, Any]:
    """A shallow copy of ``obj`` whose metadata.managedFields are ``entries`` (removed when None)."""
    metadata = dict(_metadata(obj))
    if entries is None:
        metadata.pop("managedFields", None)
    else:
        metadata["managedFields"] = entries
    out = dict(obj)
    if metadata or "metadata" in obj:
        out["metadata"] = metadata
    return out


def _gvk_text(obj: Any) -> str:
    """upstream's GroupVersionKind.String of an unstructured object: ``apps/v1, Kind=Deployment``."""
    api_version = obj.get("apiVersion") if isinstance(obj, dict) else None
    kind = obj.get("kind") if isinstance(obj, dict) else None
    api_version = api_version if isinstance(api_version, str) else ""
    kind = kind if isinstance(kind, str) else ""
    if api_version.count("/") > 1:
        return "/, Kind="  # ParseGroupVersion fails: the empty GVK
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}"


def _object_gvknn(obj: Any) -> str:
    """upstream's objectGVKNN: ``namespace/name; group/version, Kind=Kind``."""
    metadata = _metadata(obj)
    namespace = metadata.get("namespace") if isinstance(metadata.get("namespace"), str) else ""
    name = metadata.get("name") if isinstance(metadata.get("name"), str) else ""
    return f"{namespace}/{name}; {_gvk_text(obj)}"


class FieldManager:
    """Tracks field ownership for one kind served at ``api_version``.

    ``reset_fields``: per subresource ("" for the main resource), the fields its strategy resets
    (upstream's GetResetFields, e.g. ``{"": Set.of(make_path("status"))}``, ``{"status": ...}``);
    they are never owned through that endpoint. ``empty_object`` is the kind's Go zero value as
    JSON (derived from the compiled message when there is one).
    """

    def __init__(
        self,
        obj_type: Type,
        api_version: str,
        kind: str | None = None,
        *,
        reset_fields: Mapping[str, Set] | None = None,
        empty_object: dict[str, Any] | None = None,
        max_update_managers: int = DEFAULT_MAX_UPDATE_MANAGERS,
        known_versions: Collection[str] | None = None,
    ):
        if kind is None:
            kind = shape(obj_type.name).name
        self.type = schema.object_type(obj_type)
        self.api_version = api_version
        self.kind = kind
        self.reset_fields = dict(reset_fields or {})
        self._obj_type = obj_type
        self._empty = empty_object
        self.max_update_managers = max_update_managers
        self.known_versions = known_versions
        self._updaters: dict[str, Updater] = {}

    @property
    def empty(self) -> dict[str, Any]:
        """The kind's Go zero value as JSON, made at first use (not for every kind served at start)."""
        if self._empty is None:
            self._empty = schema.empty_object(self._obj_type, self.kind, self.api_version)
        return self._empty

    def _updater(self, subresource: str) -> Updater:
        updater = self._updaters.get(subresource)
        if updater is None:
            updater = Updater(self.type, self.reset_fields.get(subresource), self.known_versions)
            self._updaters[subresource] = updater
        return updater

    # --- update ---------------------------------------------------------------------------------

    def update(
        self, live: dict[str, Any] | None, new: dict[str, Any], manager: str, subresource: str = "", *, now: str
    ) -> dict[str, Any]:
        """``new`` with the managedFields a create (``live`` None), update or non-apply patch leaves.

        ``manager`` is the request's fieldManager or else manager_or_user_agent's prefix;
        ``now`` is the RFC 3339 time of the request (seconds). upstream: FieldManager.UpdateNoErrors.
        """
        live_obj = live if live is not None else self.empty
        managed = self._decode_live_or_new(live_obj, new, ignore_new=bool(subresource))
        obj = _with_managed_fields(new, None)
        try:
            obj, managed = self._update(live_obj, obj, managed, manager, subresource, now)
        except _Failed:
            return obj  # upstream logs "[SHOULD NOT HAPPEN] failed to update managedFields"
        return _with_managed_fields(obj, managedfields.encode(managed))

    def _decode_live_or_new(self, live: dict[str, Any], new: dict[str, Any], ignore_new: bool) -> Managed:
        """upstream's decodeLiveOrNew: the new object's managedFields when valid and non-empty (``[]``
        and ``[{}]`` reset them), else the live object's (empty when invalid)."""
        if not ignore_new:
            entries = _metadata(new).get("managedFields")
            if managedfields.is_reset(entries):
                return Managed()
            try:
                managed = managedfields.decode(entries)
                if managed.fields:
                    return managed
            except DecodeError:
                pass
        try:
            return managedfields.decode(_metadata(live).get("managedFields"))
        except DecodeError:
            return Managed()

    def _update(
        self, live: dict[str, Any], new: dict[str, Any], managed: Managed, name: str, subresource: str, now: str
    ) -> tuple[dict[str, Any], Managed]:
        # skipNonApplied: an untracked object stays untracked, except on create.
        if not managed.fields and _metadata(live).get("uid"):
            return new, managed
        managed = self._update_tracked(live, new, managed, name, subresource, now)
        return new, self._cap_update_managers(managed)

    def _update_tracked(self, live: Any, new: Any, managed: Managed, name: str, subresource: str, now: str) -> Managed:
        """buildManagerInfo, managedFieldsUpdater, stripMeta and structuredMerge for an update."""
        identifier = managedfields.build_manager_identifier(
            name or _UNKNOWN_MANAGER, UPDATE, self.api_version, subresource
        )
        try:
            _, fields = self._updater(subresource).update(
                live, new, self.api_version, dict(managed.fields), _CURRENT_OPERATION
            )
        except (typed.TypedError, typed.ItemError) as e:
            raise _Failed(str(e)) from None
        _strip(fields, _CURRENT_OPERATION)
        times = dict(managed.times)
        current = fields.pop(_CURRENT_OPERATION, None)
        if current is not None:
            previous = fields.get(identifier)
            merged = current.set if previous is None else current.set.union(previous.set)
            before = managed.fields.get(identifier)
            if before is not None and merged == before.set:
                merged = before.set  # the same fields: keep the decoded set (and its cached FieldsV1)
            fields[identifier] = VersionedSet(merged, current.api_version, current.applied)
            times[identifier] = now
        return Managed(fields, times)

    def _cap_update_managers(self, managed: Managed) -> Managed:
        """upstream's capUpdateManagers: the oldest Update entries merge into "ancient-changes" per
        API version until at most ``max_update_managers`` Update entries remain."""
        updaters = [m for m, vs in managed.fields.items() if not vs.applied]
        if len(updaters) <= self.max_update_managers:
            return managed
        fields, times = dict(managed.fields), dict(managed.times)
        updaters.sort(key=lambda m: (managedfields.unix_seconds(times.get(m)), m))
        first_of_version: dict[str, str] = {}
        remaining = len(updaters)
        for manager in updaters:
            if remaining <= self.max_update_managers:
                break
            vs, time = fields[manager], times.get(manager)
            bucket = managedfields.build_manager_identifier(ANCIENT_CHANGES, UPDATE, vs.api_version)
            first = first_of_version.get(vs.api_version)
            if first is None:
                first_of_version[vs.api_version] = manager
                continue
            if bucket not in fields:
                fields[bucket] = fields.pop(first)
            fields[bucket] = VersionedSet(vs.set.union(fields[bucket].set), vs.api_version, vs.applied)
            del fields[manager]
            remaining -= 1
            times[bucket] = time
        return Managed(fields, times)

    # --- apply ----------------------------------------------------------------------------------

    def check_kind(self, applied: dict[str, Any]) -> None:
        """versionCheckManager.Apply: an apply configuration of another kind or version is a 400."""
        if _gvk_text(applied) != _gvk_text({"apiVersion": self.api_version, "kind": self.kind}):
            raise errors.bad_request(f"invalid object type: {_gvk_text(applied)}")

    def apply(
        self,
        live: dict[str, Any] | None,
        applied: dict[str, Any],
        manager: str,
        force: bool = False,
        subresource: str = "",
        *,
        now: str,
    ) -> dict[str, Any] | Unchanged:
        """The object after a server-side apply of ``applied`` (a parsed apply-patch body) by
        ``manager`` (required: see options.patch_options_errors), with its managedFields.

        ``live`` is None when the object does not exist (apply creates it). The result is not yet
        defaulted: upstream defaults the merged object inside Apply, so the caller decodes it through
        the codec and applies defaults. Returns ``Unchanged`` when nothing at all changes. Raises
        StatusError: 409 on conflicts (unless ``force``), 400 for a wrong kind or managedFields in the
        body, 500 (no reason) for an applied object that does not fit the schema.
        """
        live_obj = live if live is not None else self.empty
        try:
            managed = managedfields.decode(_metadata(live_obj).get("managedFields"))
        except DecodeError as e:  # FieldManager.Apply
            raise errors.not_a_status(f"failed to decode managed fields: {e}") from None
        self.check_kind(applied)
        try:
            obj, managed = self._apply_upgrading_client_side(
                live_obj, applied, managed, manager, force, subresource, now
            )
        except Conflicts as c:
            raise conflict_error(c) from None
        # lastAppliedUpdater
        if manager == lastapplied.KUBECTL:
            obj = lastapplied.update(obj, applied)
        obj = _with_managed_fields(obj, managedfields.encode(managed))
        if live is not None and equals(obj, live):
            return Unchanged(live)
        return deep.copy(obj)  # results must not share containers with the live object

    def _apply_upgrading_client_side(
        self, live: Any, applied: Any, managed: Managed, name: str, force: bool, subresource: str, now: str
    ) -> tuple[dict[str, Any], Managed]:
        """lastAppliedManager: for "kubectl", conflicts only on what the last-applied annotation shows
        kubectl applied client-side are forced."""
        try:
            return self._apply(live, applied, managed, name, force, subresource, now)
        except Conflicts as c:
            if name != lastapplied.KUBECTL:
                raise
            allowed = lastapplied.allowed_conflicts(live, self.type, self.api_version)
            if allowed is None:
                raise
            if not c.to_set().difference(allowed).empty():
                raise Conflicts([(m, p) for m, p in c.conflicts if not allowed.has(p)]) from None
        return self._apply(live, applied, managed, name, True, subresource, now)

    def _apply(
        self, live: Any, applied: Any, managed: Managed, name: str, force: bool, subresource: str, now: str
    ) -> tuple[dict[str, Any], Managed]:
        # skipNonApplied: fields of an untracked object belong to "before-first-apply".
        if not managed.fields:
            managed = self._cap_update_managers(
                self._update_tracked(self.empty, live, managed, BEFORE_FIRST_APPLY, subresource, now)
            )
        identifier = managedfields.build_manager_identifier(name or _UNKNOWN_MANAGER, APPLY, subresource=subresource)
        obj, fields = self._structured_apply(live, applied, dict(managed.fields), identifier, force, subresource)
        _strip(fields, identifier)
        times = dict(managed.times)
        # managedFieldsUpdater: the applier's time changes when the object does.
        if obj is MISSING:
            obj = _with_managed_fields(live, None)
        else:
            times[identifier] = now
        return obj, Managed(fields, times)

    def _structured_apply(
        self, live: Any, applied: Any, fields: dict[str, VersionedSet], identifier: str, force: bool, subresource: str
    ) -> tuple[Any, dict[str, VersionedSet]]:
        """upstream's structuredMergeManager.Apply."""
        group_version = applied.get("apiVersion") if isinstance(applied.get("apiVersion"), str) else ""
        if group_version != self.api_version:
            raise errors.bad_request(
                "Incorrect version specified in apply patch. "
                f"Specified patch version: {group_version}, expected: {self.api_version}"
            )
        entries = _metadata(applied).get("managedFields")
        if isinstance(entries, list) and all(isinstance(e, dict) for e in entries):
            raise errors.bad_request("metadata.managedFields must be nil")
        try:
            typed.validate(applied, self.type)
        except typed.TypedError as e:
            raise errors.not_a_status(f"failed to create typed patch object ({_object_gvknn(applied)}): {e}") from None
        try:
            typed.validate(live, self.type, allow_duplicates=True)
        except typed.TypedError as e:
            raise errors.not_a_status(f"failed to create typed live object ({_object_gvknn(live)}): {e}") from None
        try:
            return self._updater(subresource).apply(live, applied, self.api_version, fields, identifier, force)
        except (typed.TypedError, typed.ItemError) as failure:  # a name of its own: compiled, a name has one type
            raise errors.not_a_status(str(failure)) from None


def _strip(fields: dict[str, VersionedSet], manager: str) -> None:
    """stripMetaManager.stripFields."""
    vs = fields.get(manager)
    if vs is None:
        return
    stripped = vs.set.difference(_STRIPPED)
    if stripped.empty():
        del fields[manager]
    else:
        fields[manager] = VersionedSet(stripped, vs.api_version, vs.applied)
