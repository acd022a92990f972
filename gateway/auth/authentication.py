"""Authentication: which user a request acts as (upstream's authenticator chain).

In order: a request on the insecure port acts as system:unsecured (in system:masters); a client
certificate verified against the client CA names the user (Common Name) and groups (Organization);
a bearer token is looked up in the token file (and, later, checked as a service account token).
The first that recognizes the request wins; when credentials were given but none recognized them,
the answer is 401; a request without credentials is system:anonymous, unless anonymous requests
are turned off. Every authenticated user is in system:authenticated.
"""

from __future__ import annotations

import csv
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from cryptography import x509
from cryptography.x509.oid import NameOID
from quart import Response

from gateway import errors
from gateway.auth.user import ANONYMOUS_USER, UNSECURED_USER, UserInfo
from gateway.filters import Handler
from gateway.request import ApiRequest

log = logging.getLogger("protokube.authn")
# At most one log line per this many seconds about failed authentication (never blocks a request).
FAILURE_LOG_INTERVAL = 10.0


class Unrecognized(Exception):
    """Credentials were given but are not valid (the reason is logged, never sent)."""


class Authenticator(Protocol):
    def authenticate(self, request: ApiRequest) -> UserInfo | None:
        """The user, None when the request carries no credentials of this kind; raises Unrecognized."""


class InsecurePort:
    """Requests on the plain-HTTP port act as system:unsecured in system:masters (no credentials)."""

    def authenticate(self, request: ApiRequest) -> UserInfo | None:
        return None if request.secure else UNSECURED_USER


class ClientCertificate:
    """The TLS client certificate (already verified against the client CA during the handshake)."""

    def authenticate(self, request: ApiRequest) -> UserInfo | None:
        if not request.client_cert:
            return None
        subject = x509.load_pem_x509_certificate(request.client_cert.encode()).subject
        names = subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        if not names or not names[0].value:
            raise Unrecognized("the client certificate has no common name")
        groups = tuple(str(a.value) for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
        return UserInfo(str(names[0].value), groups=groups)


def bearer_token(request: ApiRequest) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


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

    def authenticate(self, request: ApiRequest) -> UserInfo | None:
        token = bearer_token(request)
        if token is None:
            return None
        return self.tokens.get(token)


class Authentication:
    """The filter: tries each authenticator in order, as upstream's union authenticator does."""

    def __init__(self, next_handler: Handler, authenticators: Sequence[Authenticator], *, anonymous: bool) -> None:
        self.next = next_handler
        self.authenticators = tuple(authenticators)
        self.anonymous = anonymous
        self._last_logged = 0.0

    async def __call__(self, request: ApiRequest) -> Response:
        request.user = self.authenticate(request)
        return await self.next(request)

    def authenticate(self, request: ApiRequest) -> UserInfo:
        failures: list[str] = []
        for authenticator in self.authenticators:
            try:
                user = authenticator.authenticate(request)
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
