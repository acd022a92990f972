"""What a service account token says (upstream's pkg/serviceaccount claims.go and legacy.go), and
the identity it proves.

A bound token (TokenRequest) carries the registered claims iss, sub, aud, exp, iat, nbf and jti,
and the private claim ``kubernetes.io`` naming the namespace, the service account and the object
it is bound to (pod, secret or node, each with its uid). A legacy token (kept in a Secret of type
kubernetes.io/service-account-token) has issuer ``kubernetes/serviceaccount``, no audience and no
expiry, and names the account and Secret in flat ``kubernetes.io/serviceaccount/...`` claims.
Claims are written with sorted keys, as upstream's JSON encoder writes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from protokube.gateway.user import SERVICE_ACCOUNT_PREFIX, SERVICE_ACCOUNTS, UserInfo

LEGACY_ISSUER = "kubernetes/serviceaccount"
PRIVATE_CLAIM = "kubernetes.io"
LEGACY_NAMESPACE = "kubernetes.io/serviceaccount/namespace"
LEGACY_SECRET_NAME = "kubernetes.io/serviceaccount/secret.name"
LEGACY_ACCOUNT_NAME = "kubernetes.io/serviceaccount/service-account.name"
LEGACY_ACCOUNT_UID = "kubernetes.io/serviceaccount/service-account.uid"
# The extra keys of a service account user (k8s.io/apiserver pkg/authentication/serviceaccount).
POD_NAME = "authentication.kubernetes.io/pod-name"
POD_UID = "authentication.kubernetes.io/pod-uid"
NODE_NAME = "authentication.kubernetes.io/node-name"
NODE_UID = "authentication.kubernetes.io/node-uid"
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"


@dataclass(frozen=True, slots=True)
class Ref:
    """An object a token names: its name and uid."""

    name: str
    uid: str = ""

    def claim(self) -> dict[str, str]:
        return {key: value for key, value in (("name", self.name), ("uid", self.uid)) if value}

    @classmethod
    def from_claim(cls, value: Any) -> Ref | None:
        if not isinstance(value, dict):
            return None
        return cls(str(value.get("name", "")), str(value.get("uid", "")))


@dataclass(frozen=True, slots=True)
class Binding:
    """The object a bound token lives and dies with (at most one of pod and secret; a pod-bound
    token also names the pod's node, for information)."""

    pod: Ref | None = None
    secret: Ref | None = None
    node: Ref | None = None


def bound_claims(
    *,
    issuer: str,
    namespace: str,
    account: Ref,
    audiences: list[str],
    issued_at: int,
    expires_in: int,
    warn_after: int,
    binding: Binding,
    jti: str,
) -> dict[str, Any]:
    """upstream's Claims: the claims of a TokenRequest's token."""
    private: dict[str, Any] = {"namespace": namespace}
    if binding.node is not None:
        private["node"] = binding.node.claim()
    if binding.pod is not None:
        private["pod"] = binding.pod.claim()
    if binding.secret is not None:
        private["secret"] = binding.secret.claim()
    private["serviceaccount"] = account.claim()
    if warn_after:
        private["warnafter"] = issued_at + warn_after
    return {
        "aud": list(audiences),
        "exp": issued_at + expires_in,
        "iat": issued_at,
        "iss": issuer,
        "jti": jti,
        PRIVATE_CLAIM: private,
        "nbf": issued_at,
        "sub": f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{account.name}",
    }


def legacy_claims(namespace: str, account: Ref, secret_name: str) -> dict[str, Any]:
    """upstream's LegacyClaims: the claims of a token kept in a Secret."""
    return {
        "iss": LEGACY_ISSUER,
        LEGACY_NAMESPACE: namespace,
        LEGACY_SECRET_NAME: secret_name,
        LEGACY_ACCOUNT_NAME: account.name,
        LEGACY_ACCOUNT_UID: account.uid,
        "sub": f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{account.name}",
    }


@dataclass(frozen=True, slots=True)
class ServiceAccountInfo:
    """Who a valid token proves the bearer to be (upstream's ServiceAccountInfo)."""

    namespace: str
    name: str
    uid: str
    pod: Ref | None = None
    node: Ref | None = None
    credential_id: str = ""

    def user(self) -> UserInfo:
        extra: dict[str, tuple[str, ...]] = {}
        if self.pod is not None and self.pod.name and self.pod.uid:
            extra[POD_NAME], extra[POD_UID] = (self.pod.name,), (self.pod.uid,)
        if self.credential_id:
            extra[CREDENTIAL_ID] = (self.credential_id,)
        if self.node is not None and self.node.name:
            extra[NODE_NAME] = (self.node.name,)
            if self.node.uid:
                extra[NODE_UID] = (self.node.uid,)
        groups = (SERVICE_ACCOUNTS, f"{SERVICE_ACCOUNTS}:{self.namespace}")
        return UserInfo(f"{SERVICE_ACCOUNT_PREFIX}{self.namespace}:{self.name}", self.uid, groups, extra)
