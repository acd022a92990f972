"""Authorization: may this user do what the request asks (upstream's authorizer chain + WithAuthorization).

Members of system:masters may do everything (upstream's privileged-group authorizer); everyone
else needs an RBAC rule. A refusal is a 403 worded as upstream's forbidden responses:
``pods "x" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "dev"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final, Protocol

from protokube.gateway import errors
from protokube.gateway.auth.rbac import EVERYTHING, Attributes, Decision, Rules
from protokube.gateway.request import ApiRequest, Handler, Response
from protokube.gateway.requestinfo import RequestInfo
from protokube.gateway.selectors import exact_name
from protokube.gateway.user import MASTERS, UserInfo

ALLOWED: Final = Decision(True)  # a decision is immutable: one for every allowed request


class Authorizer(Protocol):
    def authorize(self, request: Attributes) -> Decision: ...

    def rules(self, user: UserInfo, namespace: str) -> Rules:
        """What ``user`` may do in ``namespace``, as far as this authorizer can list it."""


class AlwaysAllow:
    """--authorization-mode=AlwaysAllow: every request is allowed (no security; upstream's mode)."""

    def authorize(self, request: Attributes) -> Decision:
        return ALLOWED

    def rules(self, user: UserInfo, namespace: str) -> Rules:
        return everything()


class AlwaysDeny:
    """--authorization-mode=AlwaysDeny: no opinion that allows anything."""

    def authorize(self, request: Attributes) -> Decision:
        return Decision(False, "Everything is forbidden.")

    def rules(self, user: UserInfo, namespace: str) -> Rules:
        return Rules()


class Union:
    """The modes in order: the first that allows decides; otherwise the reasons of all are given
    (upstream's union authorizer)."""

    def __init__(self, authorizers: Sequence[Authorizer]) -> None:
        self.authorizers = tuple(authorizers)

    def authorize(self, request: Attributes) -> Decision:
        reasons = []
        for authorizer in self.authorizers:
            decision = authorizer.authorize(request)
            if decision.allowed:
                return decision
            if decision.reason:
                reasons.append(decision.reason)
        return Decision(False, "\n".join(reasons))

    def rules(self, user: UserInfo, namespace: str) -> Rules:
        found = Rules()
        for authorizer in self.authorizers:
            found.extend(authorizer.rules(user, namespace))
        return found


class Privileged:
    """system:masters may do everything; then ``then`` decides."""

    def __init__(self, then: Authorizer) -> None:
        self.then = then

    def authorize(self, request: Attributes) -> Decision:
        if MASTERS in request.user.groups:
            return ALLOWED
        return self.then.authorize(request)

    def rules(self, user: UserInfo, namespace: str) -> Rules:
        """Only the modes' rules, as upstream's rule resolver (masters get theirs from the
        cluster-admin binding of the bootstrap policy)."""
        return self.then.rules(user, namespace)


def everything() -> Rules:
    found = Rules()
    found.add(EVERYTHING)
    return found


def _name(request: ApiRequest, info: RequestInfo) -> str:
    """The object's name; for a list or watch, the one its field selector pins, so that RBAC's
    resourceNames can allow it (upstream's RequestInfoFactory)."""
    if info.name or info.verb not in ("list", "watch"):
        return info.name
    name = exact_name(request.args.get("fieldSelector") or "")
    return name if name and name not in (".", "..") and not any(c in name for c in "/%") else ""


def attributes(request: ApiRequest, info: RequestInfo) -> Attributes:
    if info.is_resource_request:
        return Attributes(
            request.user,
            info.verb,
            True,
            info.group,
            info.resource,
            info.subresource,
            info.namespace,
            _name(request, info),
            request.path,
        )
    return Attributes(request.user, request.method.lower(), False, path=request.path)


def forbidden_message(request: Attributes) -> str:
    """upstream's forbiddenMessage."""
    user = request.user.name
    if not request.resource_request:
        return f'User "{user}" cannot {request.verb} path "{request.path}"'
    resource = f"{request.resource}/{request.subresource}" if request.subresource else request.resource
    where = f'in the namespace "{request.namespace}"' if request.namespace else "at the cluster scope"
    return f'User "{user}" cannot {request.verb} resource "{resource}" in API group "{request.api_group}" {where}'


def forbidden(request: Attributes, reason: str = "") -> errors.StatusError:
    message = forbidden_message(request) + (f": {reason}" if reason else "")
    if not request.resource_request:
        return errors.forbidden("", "", "", message)
    return errors.forbidden(request.api_group, request.resource, request.name, message)


class CreateAuthorization:
    """May the user create what a PUT or a PATCH turns into a create (upstream's withAuthorization)?
    Called by the store when it decides to create; the authorizer is asked once, so retries of a
    conflicted write reuse its answer."""

    def __init__(self, authorizer: Authorizer, request: ApiRequest, info: RequestInfo) -> None:
        self.authorizer = authorizer
        self.asked = replace(attributes(request, info), verb="create")
        self.decision: Decision | None = None

    def __call__(self) -> None:
        """403 (upstream's NewForbidden with the authorizer's reason) unless the create is allowed."""
        if self.decision is None:
            self.decision = self.authorizer.authorize(self.asked)
        if not self.decision.allowed:
            asked = self.asked
            raise errors.forbidden(asked.api_group, asked.resource, asked.name, self.decision.reason)


class Authorization:
    """The filter: refuses what the authorizer does not allow."""

    def __init__(self, next_handler: Handler, authorizer: Authorizer) -> None:
        self.next = next_handler
        self.authorizer = authorizer

    async def __call__(self, request: ApiRequest) -> Response:
        assert request.info is not None
        asked = attributes(request, request.info)
        decision = self.authorizer.authorize(asked)
        if not decision.allowed:
            raise forbidden(asked, decision.reason)
        return await self.next(request)
