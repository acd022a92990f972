"""Authentication: which user a request acts as (upstream's authenticator chain).

In order: a request on the insecure port acts as system:unsecured (in system:masters); a client
certificate verified against the client CA names the user (Common Name) and groups (Organization);
a bearer token goes to the token authenticators (the token file, service account tokens), which
TokenReview asks too. The first that recognizes the request wins; when credentials were given but none recognized them,
the answer is 401; a request without credentials is system:anonymous, unless anonymous requests
are turned off. Every authenticated user is in system:authenticated.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final, Protocol

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID

from protokube.gateway import errors
from protokube.gateway.errors import go_quote
from protokube.gateway.request import ApiRequest, Handler, Response
from protokube.gateway.user import ANONYMOUS_USER, UNSECURED_USER, UserInfo

log = logging.getLogger("protokube.authn")
# At most one log line per this many seconds about failed authentication (never blocks a request).
FAILURE_LOG_INTERVAL: Final = 10.0


class Unrecognized(Exception):
    """Credentials were given but are not valid (the reason is logged, never sent)."""


CREDENTIAL_ID: Final = "authentication.kubernetes.io/credential-id"


class Authenticator(Protocol):
    async def authenticate(self, request: ApiRequest) -> UserInfo | None:
        """The user, None when the request carries no credentials of this kind; raises Unrecognized."""


@dataclass(frozen=True, slots=True)
class TokenResponse:
    user: UserInfo
    audiences: tuple[str, ...]  # the audiences the token is good for, of those asked for


class TokenAuthenticator(Protocol):
    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> TokenResponse | None:
        """The user of a bearer token meant for one of ``audiences``; None when the token is not of
        this kind; raises Unrecognized when it is but is not valid."""


class InsecurePort:
    """Requests on the plain-HTTP port act as system:unsecured in system:masters (no credentials)."""

    async def authenticate(self, request: ApiRequest) -> UserInfo | None:
        return None if request.secure else UNSECURED_USER


class ClientCertificate:
    """The TLS client certificate (already verified against the client CA during the handshake);
    its SHA-256 fingerprint is the credential id, as upstream's x509 authenticator gives it."""

    async def authenticate(self, request: ApiRequest) -> UserInfo | None:
        if not request.client_cert:
            return None
        user = certificate_user(request.client_cert)
        if user is None:
            raise Unrecognized("the client certificate has no common name")
        return user


@functools.lru_cache(maxsize=1024)
def certificate_user(pem: str) -> UserInfo | None:
    """The user a (verified) certificate names; remembered, as every request of a connection and
    every connection of a client presents the same one."""
    cert = x509.load_pem_x509_certificate(pem.encode())
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not names or not names[0].value:
        return None
    groups = tuple(str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
    fingerprint = hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()
    return UserInfo(str(names[0].value), groups=groups, extra={CREDENTIAL_ID: (f"X509SHA256={fingerprint}",)})


def bearer_token(request: ApiRequest) -> str | None:
    """upstream's split of the header on single spaces: the token is the second field, whatever
    follows it; none when that field is empty (two spaces after "Bearer": the request is anonymous)."""
    parts = request.header("Authorization").strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None
    return parts[1] or None


class TokenFile:
    """--token-auth-file: CSV lines of token, user name, user uid and optionally "group1,group2"."""

    def __init__(self, tokens: dict[str, UserInfo]) -> None:
        self.tokens = tokens

    @classmethod
    def load(cls, path: Path) -> TokenFile:
        tokens: dict[str, UserInfo] = {}
        with path.open(newline="") as lines:
            for number, record in enumerate(csv.reader(lines), 1):
                if not record or (len(record) == 1 and not record[0].strip()):
                    continue
                if len(record) < 3:
                    raise ValueError(
                        f"token file '{path}' must have at least 3 columns (token, user name, user uid), "
                        f"found {len(record)} on line {number}"
                    )
                groups = tuple(g.strip() for g in record[3].split(",") if g.strip()) if len(record) > 3 else ()
                tokens[record[0]] = UserInfo(record[1], record[2], groups)
        return cls(tokens)

    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> TokenResponse | None:
        user = self.tokens.get(token)
        return None if user is None else TokenResponse(user, audiences)


class AudienceAgnostic:
    """A token authenticator that knows nothing of audiences (the token file) serves the API
    server's own audiences only (upstream's WrapAudienceAgnosticToken)."""

    def __init__(self, inner: TokenAuthenticator, api_audiences: tuple[str, ...]) -> None:
        self.inner = inner
        self.api_audiences = api_audiences

    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> TokenResponse | None:
        common = tuple(a for a in self.api_audiences if a in audiences)
        if not common:
            return None
        found = await self.inner.authenticate_token(token, common)
        return None if found is None else replace(found, audiences=common)


class Tokens:
    """Every token authenticator, asked in order (upstream's union token authenticator): the first
    that recognizes the token answers; when none does, the reasons of those that refused it."""

    def __init__(self, authenticators: Sequence[TokenAuthenticator], api_audiences: tuple[str, ...]) -> None:
        self.authenticators = tuple(authenticators)
        self.api_audiences = api_audiences

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> TokenResponse | None:
        """``audiences`` empty: the API server's own."""
        wanted = audiences or self.api_audiences
        failures: list[str] = []
        for authenticator in self.authenticators:
            try:
                found = await authenticator.authenticate_token(token, wanted)
            except Unrecognized as err:
                failures.append(str(err))
                continue
            if found is not None:
                return replace(found, user=found.user.authenticated())
        if failures:
            raise Unrecognized(failures[0] if len(failures) == 1 else f"[{', '.join(failures)}]")
        return None


class BearerToken:
    """The request's bearer token, for the API server's own audiences."""

    def __init__(self, tokens: Tokens) -> None:
        self.tokens = tokens

    async def authenticate(self, request: ApiRequest) -> UserInfo | None:
        token = bearer_token(request)
        if token is None:
            return None
        found = await self.tokens.authenticate_token(token)
        return None if found is None else found.user


def audiences_text(audiences: Sequence[str]) -> str:
    """A list of audiences as Go's %q writes a []string: ["a" "b"]."""
    return "[" + " ".join(go_quote(a) for a in audiences) + "]"


class Authentication:
    """The filter: tries each authenticator in order, as upstream's union authenticator does."""

    def __init__(self, next_handler: Handler, authenticators: Sequence[Authenticator], *, anonymous: bool) -> None:
        self.next = next_handler
        self.authenticators = tuple(authenticators)
        self.anonymous = anonymous
        self._last_logged = 0.0

    async def __call__(self, request: ApiRequest) -> Response:
        request.user = await self.authenticate(request)
        return await self.next(request)

    async def authenticate(self, request: ApiRequest) -> UserInfo:
        failures: list[str] = []
        for authenticator in self.authenticators:
            try:
                user = await authenticator.authenticate(request)
            except Unrecognized as err:
                failures.append(str(err))
                continue
            if user is not None:
                return user.authenticated()
        if failures or bearer_token(request) is not None:
            self._log_failure(request, failures or ["invalid bearer token"])
            raise errors.unauthorized()
        if not self.anonymous:
            raise errors.unauthorized()
        return ANONYMOUS_USER

    def _log_failure(self, request: ApiRequest, failures: list[str]) -> None:
        now = time.monotonic()
        if now - self._last_logged >= FAILURE_LOG_INTERVAL:
            self._last_logged = now
            log.warning("request %s: unable to authenticate: %s", request.request_id, "; ".join(failures))
