"""Query parameters, parsed and validated as kube-apiserver does (ListOptions, CreateOptions …).

Booleans take Go's strconv.ParseBool spellings (1, t, true, True …); integers must parse or the
request gets 400; option values outside their allowed set give upstream's 422
``XOptions.meta.k8s.io "" is invalid: ...``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from protokube.gateway import errors
from protokube.gateway.errors import FieldError
from protokube.gateway.fieldmanager.options import (
    manager_or_user_agent,
    patch_options_errors,
    validate_field_manager,
)
from protokube.gateway.requestinfo import parse_bool
from protokube.gateway.user import LOOPBACK_USER, UserInfo
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta

FIELD_VALIDATION_VALUES: Final = ("", "Ignore", "Strict", "Warn")


def _bool(query: Mapping[str, str], name: str, default: bool = False) -> bool:
    value = query.get(name)
    if value is None:
        return default
    if value == "":
        return True if name in ("watch", "pretty") else default
    return parse_bool(name, value)


INT64: Final = (-(2**63), 2**63 - 1)
UINT64_MAX: Final = 2**64 - 1


def _int(query: Mapping[str, str], name: str) -> int | None:
    """An int64 parameter as Go's strconv.ParseInt reads it."""
    value = query.get(name)
    if value is None or value == "":
        return None
    try:
        number = int(value, 10)
    except ValueError:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{value}": invalid syntax ({name})') from None
    if not INT64[0] <= number <= INT64[1]:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{value}": value out of range ({name})')
    return number


# Not frozen: made per request, and a frozen dataclass costs three times as much to make (README).
@dataclass(slots=True)
class ListOptions:
    label_selector: str = ""
    field_selector: str = ""
    watch: bool = False
    allow_watch_bookmarks: bool = False
    resource_version: str | None = None  # None: the parameter was absent
    resource_version_match: str = ""
    timeout_seconds: int | None = None
    limit: int = 0
    continue_token: str = ""
    send_initial_events: bool | None = None


def list_options(query: Mapping[str, str]) -> ListOptions:
    limit = _int(query, "limit") or 0
    send_initial = query.get("sendInitialEvents")
    return ListOptions(
        label_selector=query.get("labelSelector", ""),
        field_selector=query.get("fieldSelector", ""),
        watch=_bool(query, "watch"),
        allow_watch_bookmarks=_bool(query, "allowWatchBookmarks"),
        resource_version=query.get("resourceVersion"),
        resource_version_match=query.get("resourceVersionMatch", ""),
        timeout_seconds=_int(query, "timeoutSeconds"),
        limit=max(limit, 0),
        continue_token=query.get("continue", ""),
        send_initial_events=None if send_initial is None else parse_bool("sendInitialEvents", send_initial),
    )


# A plain class: a dataclass's generated ``__init__`` runs as Python, even compiled (README).
class WriteOptions:
    """CreateOptions / UpdateOptions / PatchOptions: what every mutating request may carry."""

    def __init__(
        self,
        dry_run: bool = False,
        field_manager: str = "",
        field_validation: str = "",
        force: bool | None = None,
        user: UserInfo = LOOPBACK_USER,
        authorize_create: Callable[[], None] | None = None,
    ) -> None:
        self.dry_run = dry_run
        self.field_manager = field_manager
        self.field_validation = field_validation
        self.force = force  # PatchOptions only: apply takes fields other managers own
        self.user = user  # who asks (upstream carries it in the request context)
        # PUT and PATCH: raises 403 unless ``user`` may create, asked when the write turns into a
        # create (upstream's withAuthorization); None for the server's own writes.
        self.authorize_create = authorize_create


def _dry_run_problems(values: list[str]) -> list[FieldError]:
    """upstream's ValidateDryRun: every value must be "All"."""
    if values and not all(v == "All" for v in values):
        return [FieldError.not_supported("dryRun", list(values), ["All"])]
    return []


def _dry_run(query: Mapping[str, list[str]], kind: str) -> bool:
    values = query.get("dryRun", [])
    problems = _dry_run_problems(values)
    if problems:
        raise errors.invalid_options(kind, problems)
    return bool(values)


def write_options(
    query: Mapping[str, list[str]],
    kind: str,
    patch_type: str = "",
    *,
    user_agent: str = "",
    user: UserInfo = LOOPBACK_USER,
    authorize_create: Callable[[], None] | None = None,
) -> WriteOptions:
    """Parse create/update/patch options as upstream validates them (every problem at once, in
    upstream's order); ``kind`` is CreateOptions, UpdateOptions or PatchOptions, ``patch_type`` the
    PATCH's Content-Type. Without ``?fieldManager=`` the manager is the User-Agent's product."""
    single = {k: v[0] for k, v in query.items() if v}
    validation = single.get("fieldValidation", "")
    manager = single.get("fieldManager", "")
    force = None if "force" not in single else parse_bool("force", single["force"])
    if kind == "PatchOptions":
        problems = patch_options_errors(manager, force, patch_type in APPLY_PATCH_TYPES)
    else:
        problems = validate_field_manager(manager)
    problems += _dry_run_problems(query.get("dryRun", []))
    if validation not in FIELD_VALIDATION_VALUES:
        problems.append(FieldError.not_supported("fieldValidation", validation, FIELD_VALIDATION_VALUES))
    if problems:
        raise errors.invalid_options(kind, problems)
    return WriteOptions(
        dry_run=bool(query.get("dryRun")),
        field_manager=manager_or_user_agent(manager, user_agent),
        field_validation=validation,
        force=force,
        user=user,
        authorize_create=authorize_create,
    )


APPLY_PATCH_TYPES: Final = ("application/apply-patch+yaml", "application/apply-patch+cbor")


PROPAGATION_POLICIES: Final = ("Foreground", "Background", "Orphan")
IGNORE_READ_ERROR: Final = "ignoreStoreReadErrorWithClusterBreakingPotential"


# Not frozen: made per request, and a frozen dataclass costs three times as much to make (README).
@dataclass(slots=True)
class DeleteOptions:
    dry_run_values: tuple[str, ...] = ()
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None
    preconditions: bool = False  # a preconditions object was given (even an empty one)
    precondition_uid: str | None = None
    precondition_resource_version: str | None = None
    # Delete an object whose stored bytes cannot be read (behind AllowUnsafeMalformedObjectDeletion).
    ignore_store_read_error: bool | None = None
    user: UserInfo = LOOPBACK_USER  # who asks

    @property
    def dry_run(self) -> bool:
        return bool(self.dry_run_values)

    @property
    def unsafe(self) -> bool:
        """The request asks for the unsafe deletion of a corrupt object."""
        return bool(self.ignore_store_read_error)


def delete_options_from_query(query: Mapping[str, list[str]]) -> DeleteOptions:
    """DeleteOptions as query parameters (validated once merged with a body: validate_delete_options)."""
    single = {k: v[0] for k, v in query.items() if v}
    orphan = single.get("orphanDependents")
    ignore = single.get(IGNORE_READ_ERROR)
    return DeleteOptions(
        dry_run_values=tuple(query.get("dryRun", [])),
        grace_period_seconds=_int(single, "gracePeriodSeconds"),
        propagation_policy=single.get("propagationPolicy"),
        orphan_dependents=None if orphan is None else parse_bool("orphanDependents", orphan),
        ignore_store_read_error=None if ignore is None else parse_bool(IGNORE_READ_ERROR, ignore),
    )


def merged_delete_options(options: DeleteOptions, body: meta.DeleteOptions) -> DeleteOptions:
    """The options of a DeleteOptions body (a DELETE's, an Eviction's) over those of the query."""
    changes: dict[str, Any] = {}
    if body.HasField("gracePeriodSeconds"):
        changes["grace_period_seconds"] = body.gracePeriodSeconds
    if body.HasField("propagationPolicy"):
        changes["propagation_policy"] = body.propagationPolicy
    if body.HasField("orphanDependents"):
        changes["orphan_dependents"] = body.orphanDependents
    if body.HasField("ignoreStoreReadErrorWithClusterBreakingPotential"):
        changes["ignore_store_read_error"] = body.ignoreStoreReadErrorWithClusterBreakingPotential
    if body.HasField("preconditions"):
        changes["preconditions"] = True
        if body.preconditions.HasField("uid"):
            changes["precondition_uid"] = body.preconditions.uid
        if body.preconditions.HasField("resourceVersion"):
            changes["precondition_resource_version"] = body.preconditions.resourceVersion
    if list(body.dryRun):
        changes["dry_run_values"] = tuple(body.dryRun)
    return dataclasses.replace(options, **changes)


def checked_delete_options(options: DeleteOptions) -> DeleteOptions:
    """Validated (422 with every problem); a negative grace period means 0."""
    validate_delete_options(options)
    if options.grace_period_seconds is not None and options.grace_period_seconds < 0:
        return dataclasses.replace(options, grace_period_seconds=0)
    return options


def validate_delete_options(options: DeleteOptions) -> None:
    """upstream's ValidateDeleteOptions: every problem at once, 422 ``DeleteOptions.meta.k8s.io "" is invalid``."""
    found: list[FieldError] = []
    policy = options.propagation_policy
    if options.orphan_dependents is not None and policy is not None:
        found.append(
            FieldError.invalid(
                "propagationPolicy", policy, "orphanDependents and deletionPropagation cannot be both set"
            )
        )
    if policy is not None and policy not in PROPAGATION_POLICIES:
        found.append(FieldError.not_supported("propagationPolicy", policy, [*PROPAGATION_POLICIES, "nil"]))
    found += _dry_run_problems(list(options.dry_run_values))
    if options.unsafe:
        others = (
            ("dryRun", options.dry_run),
            ("propagationPolicy", policy is not None),
            ("orphanDependents", options.orphan_dependents is not None),
            ("gracePeriodSeconds", options.grace_period_seconds is not None),
            ("preconditions", options.preconditions),
        )
        found += [
            FieldError.invalid(IGNORE_READ_ERROR, True, f"cannot be set together with .{name}")
            for name, given in others
            if given
        ]
    if found:
        raise errors.invalid_options("DeleteOptions", found)


LIST_OPTIONS: Final = "ListOptions"
NOT_OLDER_THAN: Final = "NotOlderThan"
EXACT: Final = "Exact"


def validate_list_options(options: ListOptions) -> ListOptions:
    """upstream's ValidateListOptions (422 Invalid) and its watch-list defaulting.

    A watch from "" or "0" without sendInitialEvents or resourceVersionMatch is defaulted to
    sendInitialEvents=true, resourceVersionMatch=NotOlderThan (WatchList is on in 1.32): the
    initial state arrives as ADDED events, as it always did.
    """
    found: list[FieldError] = []
    match = options.resource_version_match
    rv = options.resource_version or ""
    if options.watch:
        if options.send_initial_events is not None and match != NOT_OLDER_THAN:
            found.append(
                FieldError.forbidden(
                    "resourceVersionMatch",
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                )
            )
        if match:
            if options.send_initial_events is None:
                found.append(
                    FieldError.forbidden(
                        "resourceVersionMatch",
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    )
                )
            if match != NOT_OLDER_THAN:
                found.append(FieldError.not_supported("resourceVersionMatch", match, [NOT_OLDER_THAN]))
    else:
        if match:
            if not rv:
                found.append(
                    FieldError.forbidden(
                        "resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"
                    )
                )
            if options.continue_token:
                found.append(
                    FieldError.forbidden(
                        "resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"
                    )
                )
            if match not in (EXACT, NOT_OLDER_THAN):
                found.append(FieldError.not_supported("resourceVersionMatch", match, [EXACT, NOT_OLDER_THAN, ""]))
            if match == EXACT and rv == "0":
                found.append(
                    FieldError.forbidden(
                        "resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
                    )
                )
        if options.send_initial_events is not None:
            found.append(FieldError.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    if found:
        raise errors.invalid_options(LIST_OPTIONS, found)
    if options.continue_token and rv not in ("", "0"):
        raise errors.bad_request("specifying resource version is not allowed when using continue")
    if rv:
        parse_resource_version(rv)
    if options.watch and options.send_initial_events is None and not match and rv in ("", "0"):
        options = dataclasses.replace(options, send_initial_events=True, resource_version_match=NOT_OLDER_THAN)
    return options


def parse_resource_version(value: str | None) -> int | None:
    """A resourceVersion parameter as a revision (None when unset or empty), as Go's
    strconv.ParseUint reads it: 400 when not a number or beyond uint64."""
    if not value:
        return None
    problem = "invalid syntax" if not (value.isascii() and value.isdigit()) else None
    if problem is None and int(value) > UINT64_MAX:
        problem = "value out of range"
    if problem is not None:
        raise errors.bad_request(
            f'resourceVersion: Invalid value: "{value}": strconv.ParseUint: parsing "{value}": {problem}'
        )
    return int(value)
