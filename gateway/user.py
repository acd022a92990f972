"""The user a request acts as (upstream's user.Info), and the well-known names of k8s.io/apiserver
pkg/authentication/user."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ANONYMOUS = "system:anonymous"
UNAUTHENTICATED = "system:unauthenticated"
AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"
# The user of requests on the insecure port (upstream's old insecure port, k8s.io/apiserver).
UNSECURED = "system:unsecured"
SERVICE_ACCOUNTS = "system:serviceaccounts"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True, slots=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def authenticated(self) -> UserInfo:
        """The same user with system:authenticated among its groups (every authenticated user has it)."""
        if AUTHENTICATED in self.groups or self.name == ANONYMOUS:
            return self
        return UserInfo(self.name, self.uid, (*self.groups, AUTHENTICATED), self.extra)


ANONYMOUS_USER = UserInfo(ANONYMOUS, groups=(UNAUTHENTICATED,))
UNSECURED_USER = UserInfo(UNSECURED, groups=(MASTERS, AUTHENTICATED))
# Who the server's own writes act as (controllers, bootstrap objects): upstream's loopback client.
LOOPBACK_USER = UserInfo("system:apiserver", groups=(MASTERS, AUTHENTICATED))


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    """A service account as upstream names it: system:serviceaccount:NS:NAME in
    system:serviceaccounts and system:serviceaccounts:NS."""
    return UserInfo(
        f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}",
        uid,
        (SERVICE_ACCOUNTS, f"{SERVICE_ACCOUNTS}:{namespace}", AUTHENTICATED),
    )


def user_info_json(user: UserInfo) -> dict[str, Any]:
    """authentication.k8s.io/v1 UserInfo as JSON (an AdmissionReview's userInfo, CEL's request.userInfo)."""
    found: dict[str, Any] = {"username": user.name}
    if user.uid:
        found["uid"] = user.uid
    if user.groups:
        found["groups"] = list(user.groups)
    if user.extra:
        found["extra"] = {key: list(values) for key, values in user.extra.items()}
    return found
