"""Impersonation: act as another user (upstream's WithImpersonation, `kubectl --as/--as-group`).

``Impersonate-User``, ``Impersonate-Group`` (repeated), ``Impersonate-Uid`` and
``Impersonate-Extra-<key>`` name the user to act as; the requester needs the ``impersonate`` verb on
each: users, groups, serviceaccounts (for ``system:serviceaccount:NS:NAME``), and uids and
userextras/<key> in authentication.k8s.io. A non-anonymous impersonated user is in
system:authenticated unless the request says otherwise.
"""

from __future__ import annotations

import urllib.parse
from typing import Final

from protokube.gateway import errors
from protokube.gateway.auth.authorization import Authorizer, forbidden
from protokube.gateway.auth.rbac import Attributes
from protokube.gateway.request import ApiRequest, Handler, Response
from protokube.gateway.user import (
    ANONYMOUS,
    AUTHENTICATED,
    SERVICE_ACCOUNT_PREFIX,
    SERVICE_ACCOUNTS,
    UNAUTHENTICATED,
    UserInfo,
)

USER: Final = "Impersonate-User"
UID: Final = "Impersonate-Uid"
GROUP: Final = "Impersonate-Group"
EXTRA_PREFIX: Final = "Impersonate-Extra-"
IMPERSONATE_PREFIX: Final = "Impersonate-"  # of all the headers above
AUTHENTICATION_GROUP: Final = "authentication.k8s.io"


# One thing to impersonate (upstream builds ObjectReferences): kind, namespace, name, api version, field path.
Wanted = tuple[str, str, str, str, str]


def _requested(request: ApiRequest) -> list[Wanted]:
    """upstream's buildImpersonationRequests, in its order: user, groups, extras, uid."""
    headers = request.headers
    wanted: list[Wanted] = []
    user = request.header(USER)
    if user:
        account = _service_account(user)
        wanted.append(("ServiceAccount", *account, "", "") if account else ("User", "", user, "", ""))
    wanted += [("Group", "", group, "", "") for group in headers.getlist(GROUP)]
    for header, value in headers.items():
        if header.lower().startswith(EXTRA_PREFIX.lower()):
            key = urllib.parse.unquote(header[len(EXTRA_PREFIX) :].lower())
            wanted.append(("UserExtra", "", value, "authentication.k8s.io/v1", key))
    uid = request.header(UID)
    if uid:
        wanted.append(("UID", "", uid, "authentication.k8s.io/v1", ""))
    if wanted and not user:
        # upstream answers this with a 500; it is the client's mistake, so a 400 with the same words.
        refs = " ".join(_go_reference(w) for w in wanted)
        raise errors.bad_request(f"requested [{refs}] without impersonating a user")
    return wanted


def _go_reference(wanted: Wanted) -> str:
    """An ObjectReference as Go's %v prints it: {Kind Namespace Name UID APIVersion ResourceVersion FieldPath}."""
    kind, namespace, name, version, path = wanted
    return "{" + " ".join((kind, namespace, name, "", version, "", path)) + "}"


def _service_account(user: str) -> tuple[str, str] | None:
    """(namespace, name) of system:serviceaccount:NS:NAME (upstream's SplitUsername)."""
    if not user.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    namespace, sep, name = user[len(SERVICE_ACCOUNT_PREFIX) :].partition(":")
    if not sep or not namespace or not name or ":" in name:
        return None
    return namespace, name


class Impersonation:
    def __init__(self, next_handler: Handler, authorizer: Authorizer) -> None:
        self.next = next_handler
        self.authorizer = authorizer

    async def __call__(self, request: ApiRequest) -> Response:
        wanted = _requested(request) if request.headers.any_named(IMPERSONATE_PREFIX) else None
        if wanted:
            request.user = self.impersonate(request.user, wanted, groups_given=bool(request.headers.getlist(GROUP)))
        return await self.next(request)

    def impersonate(self, requester: UserInfo, wanted: list[Wanted], *, groups_given: bool) -> UserInfo:
        name, uid, groups = "", "", []
        extra: dict[str, list[str]] = {}
        for kind, namespace, ref_name, _, field_path in wanted:
            group, subresource = "", ""
            if kind == "ServiceAccount":
                resource, name = "serviceaccounts", f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{ref_name}"
                if not groups_given:
                    groups = [SERVICE_ACCOUNTS, f"{SERVICE_ACCOUNTS}:{namespace}"]
            elif kind == "User":
                resource, name = "users", ref_name
            elif kind == "Group":
                resource = "groups"
                groups.append(ref_name)
            elif kind == "UserExtra":
                resource, group, subresource = "userextras", AUTHENTICATION_GROUP, field_path
                extra.setdefault(field_path, []).append(ref_name)
            else:
                resource, group, uid = "uids", AUTHENTICATION_GROUP, ref_name
            asked = Attributes(requester, "impersonate", True, group, resource, subresource, namespace, ref_name)
            decision = self.authorizer.authorize(asked)
            if not decision.allowed:
                raise forbidden(asked, decision.reason)
        if name != ANONYMOUS:
            if not {AUTHENTICATED, UNAUTHENTICATED} & set(groups):
                groups.append(AUTHENTICATED)
        elif UNAUTHENTICATED not in groups:
            groups.append(UNAUTHENTICATED)
        return UserInfo(name, uid, tuple(groups), {k: tuple(v) for k, v in extra.items()})
