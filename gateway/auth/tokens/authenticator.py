"""Authenticating service account tokens (upstream's pkg/serviceaccount jwt.go, claims.go, legacy.go).

A token is this authenticator's when it is a JWT whose issuer is one of ours (``--service-account-issuer``)
or the legacy one; then its signature must verify with our key, its audiences must include one asked
for (a legacy token is good for the API server's own), its time claims must hold (a minute's leeway),
and the objects it names must still exist with the same uids: the service account, and the pod,
Secret or node it is bound to (a legacy token must also still be the one its Secret holds).
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Sequence
from typing import Any

from cryptography.hazmat.primitives.asymmetric import rsa

from protokube.gateway.auth.authentication import TokenResponse, Unrecognized, audiences_text
from protokube.gateway.auth.tokens import claims as c
from protokube.gateway.auth.tokens.claims import Ref, ServiceAccountInfo
from protokube.gateway.auth.tokens.keys import SigningKeys
from protokube.gateway.auth.tokens.objects import Objects

LEEWAY = 60  # seconds (go-jose's DefaultLeeway)
SIGNATURE_FAILED = "go-jose/go-jose: error in cryptographic primitive"
INVALIDATED = "service account token has been invalidated"
LEGACY_INVALIDATED = "Token has been invalidated"
LEGACY_INVALID_SINCE = "kubernetes.io/legacy-token-invalid-since"
TOKEN_KEY = "token"
# Parsing and verifying a token (about 100 µs each here) depends on its text and our key alone: the
# outcome is kept for this many recent tokens. Everything that can change — time claims, audiences,
# the objects it names — is still checked on every request, so a revoked token stops working at once.
PARSED_TOKENS = 4096


class ServiceAccountTokens:
    def __init__(
        self, keys: SigningKeys, issuers: Sequence[str], api_audiences: Sequence[str], objects: Objects
    ) -> None:
        self.keys = keys
        self.issuers = frozenset(issuers)
        self.api_audiences = tuple(api_audiences)
        self.objects = objects
        self.verified = functools.lru_cache(maxsize=PARSED_TOKENS)(functools.partial(_verified, keys.public))

    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> TokenResponse | None:
        issuer = _issuer(token)
        legacy = issuer == c.LEGACY_ISSUER
        if issuer is None or not (legacy or issuer in self.issuers):
            return None  # not ours: another authenticator may know it
        claims = self.verified(token)
        token_audiences = _audiences(claims.get("aud")) or self.api_audiences
        common = tuple(a for a in token_audiences if a in audiences)
        if not common:
            raise Unrecognized(
                f"token audiences {audiences_text(token_audiences)} is invalid "
                f"for the target audiences {audiences_text(audiences)}"
            )
        info = await (self._legacy(token, claims) if legacy else self._bound(claims))
        return TokenResponse(info.user(), common)

    async def _bound(self, claims: dict[str, Any]) -> ServiceAccountInfo:
        _check_times(claims)
        private = claims.get(c.PRIVATE_CLAIM)
        if not isinstance(private, dict):
            raise Unrecognized("service account token claims could not be validated due to unexpected private claim")
        namespace = str(private.get("namespace", ""))
        account = Ref.from_claim(private.get("serviceaccount")) or Ref("")
        found = await self.objects.get("ServiceAccount", namespace, account.name)
        if found is None:
            raise Unrecognized(f'serviceaccounts "{account.name}" not found')
        if _deleted_long_ago(found):
            raise Unrecognized(f"service account {namespace}/{account.name} has been deleted")
        if found.metadata.uid != account.uid:
            raise Unrecognized(f"service account UID ({found.metadata.uid}) does not match claim ({account.uid})")
        pod, secret, node = (Ref.from_claim(private.get(key)) for key in ("pod", "secret", "node"))
        if secret is not None:
            await self._check_bound("Secret", "secret", namespace, secret)
        if pod is not None:
            await self._check_bound("Pod", "pod", namespace, pod)
        elif node is not None:  # a pod's node is for information only; a node-bound token needs it
            await self._check_bound("Node", "node", "", node)
        jti = claims.get("jti")
        credential = f"JTI={jti}" if isinstance(jti, str) and jti else ""
        return ServiceAccountInfo(namespace, account.name, account.uid, pod, node, credential)

    async def _check_bound(self, kind: str, what: str, namespace: str, ref: Ref) -> None:
        found = await self.objects.get(kind, namespace, ref.name)
        if found is None or _deleted_long_ago(found):
            raise Unrecognized(INVALIDATED)
        if found.metadata.uid != ref.uid:
            raise Unrecognized(
                f"{what} UID ({found.metadata.uid}) does not match service account {what} ref claim ({ref.uid})"
            )

    async def _legacy(self, token: str, claims: dict[str, Any]) -> ServiceAccountInfo:
        """upstream's legacy validator."""
        subject = str(claims.get("sub") or "")
        namespace = str(claims.get(c.LEGACY_NAMESPACE) or "")
        secret_name = str(claims.get(c.LEGACY_SECRET_NAME) or "")
        name = str(claims.get(c.LEGACY_ACCOUNT_NAME) or "")
        uid = str(claims.get(c.LEGACY_ACCOUNT_UID) or "")
        for value, missing in (
            (subject, "sub claim is missing"),
            (namespace, "namespace claim is missing"),
            (secret_name, "secretName claim is missing"),
            (name, "serviceAccountName claim is missing"),
            (uid, "serviceAccountUID claim is missing"),
        ):
            if not value:
                raise Unrecognized(missing)
        if subject != f"system:serviceaccount:{namespace}:{name}":
            raise Unrecognized("sub claim is invalid")
        secret = await self.objects.get("Secret", namespace, secret_name)
        if secret is None or secret.metadata.HasField("deletionTimestamp"):
            raise Unrecognized(LEGACY_INVALIDATED)
        if secret.data.get(TOKEN_KEY) != token.encode():
            raise Unrecognized("Token does not match server's copy")
        account = await self.objects.get("ServiceAccount", namespace, name)
        if account is None:
            raise Unrecognized(f'serviceaccounts "{name}" not found')
        if account.metadata.HasField("deletionTimestamp"):
            raise Unrecognized(f"ServiceAccount {namespace}/{name} has been deleted")
        if account.metadata.uid != uid:
            raise Unrecognized(f"ServiceAccount UID ({account.metadata.uid}) does not match claim ({uid})")
        if LEGACY_INVALID_SINCE in secret.metadata.labels:
            raise Unrecognized(
                f"the token in secret {namespace}/{secret_name} for service account {namespace}/{name} has been "
                "marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, "
                f"or remove the '{LEGACY_INVALID_SINCE}' label from the secret to temporarily allow use of this token"
            )
        return ServiceAccountInfo(namespace, name, uid)


def _verified(key: rsa.RSAPublicKey, token: str) -> dict[str, Any]:
    """The claims of a token whose signature verifies with ``key`` (shared: read, never changed)."""
    import jwt  # at the first token, not at the server's start (issue 33)

    options = {"verify_exp": False, "verify_nbf": False, "verify_iat": False, "verify_aud": False}
    try:
        return jwt.decode(token, key, algorithms=["RS256"], options=options)
    except jwt.InvalidTokenError:
        raise Unrecognized(SIGNATURE_FAILED) from None


@functools.lru_cache(maxsize=PARSED_TOKENS)
def _issuer(token: str) -> str | None:
    """The issuer of a token that parses as a JWT (unverified), else None."""
    import jwt  # at the first token, not at the server's start (issue 33)

    with contextlib.suppress(jwt.InvalidTokenError):
        issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
        return issuer if isinstance(issuer, str) else None
    return None


def _audiences(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return ()


def _numeric_date(value: Any) -> bool:
    """Absent, or a JSON number (go-jose's NumericDate refuses strings, booleans and the rest)."""
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _check_times(claims: dict[str, Any]) -> None:
    """go-jose's validation with its leeway: not expired, not before its time."""
    now = time.time()
    expiry, not_before, issued = claims.get("exp"), claims.get("nbf"), claims.get("iat")
    if any(not _numeric_date(value) for value in (expiry, not_before, issued)):
        raise Unrecognized("go-jose/go-jose/jwt: expected number for NumericDate")
    if isinstance(expiry, int | float) and now - LEEWAY > expiry:
        raise Unrecognized("service account token has expired")
    if isinstance(not_before, int | float) and now + LEEWAY < not_before:
        raise Unrecognized("service account token is not valid yet")
    if isinstance(issued, int | float) and now + LEEWAY < issued:
        raise Unrecognized("service account token claims could not be validated due to unexpected validation error")


def _deleted_long_ago(obj: Any) -> bool:
    """Deleted (marked) before now minus the leeway: tokens of objects on their way out stop working."""
    meta = obj.metadata
    return meta.HasField("deletionTimestamp") and meta.deletionTimestamp.seconds < time.time() - LEEWAY
