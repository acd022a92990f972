"""Service account issuer discovery (k8s.io/kubernetes pkg/serviceaccount/openidmetadata.go and
pkg/routes/openidmetadata.go): ``/.well-known/openid-configuration`` and ``/openid/v1/jwks``, so
that relying parties outside the cluster can verify service account tokens with OIDC libraries.

Both documents are rendered once, as upstream renders them at start: the issuer's provider
metadata (issuer, jwks_uri, the fields OIDC requires) and the JSON Web Key Set of the signing
key. Upstream serves them only when the issuer is an https URL without query or fragment (it logs
and skips the endpoints otherwise); so do we.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import orjson

from protokube.gateway.auth.tokens.keys import SigningKeys
from protokube.gateway.request import ApiRequest, Response

log = logging.getLogger(__name__)

CONFIG_PATH = (".well-known", "openid-configuration")
JWKS_PATH = ("openid", "v1", "jwks")
# What upstream's handlers answer with (pkg/routes/openidmetadata.go); the max age is its public key
# getter's for keys that never change at run time.
CONFIG_TYPE, JWKS_TYPE = "application/json", "application/jwk-set+json"
MAX_AGE_SECONDS = 3600

Route = Callable[[ApiRequest], Awaitable[Response]]


def _b64url(number: int) -> str:
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def jwks(keys: SigningKeys) -> bytes:
    """The key set as go-jose writes it: use, kty, kid, alg, n, e (upstream's only key is RS256)."""
    numbers = keys.public.public_numbers()
    key = {"use": "sig", "kty": "RSA", "kid": keys.key_id, "alg": "RS256"}
    key.update(n=_b64url(numbers.n), e=_b64url(numbers.e))
    return orjson.dumps({"keys": [key]})


def provider_metadata(issuer: str, jwks_uri: str) -> bytes:
    """The minimal OIDC provider metadata upstream serves (no authorization_endpoint)."""
    return orjson.dumps(
        {
            "issuer": issuer,
            "jwks_uri": jwks_uri,
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
        }
    )


def issuer_problem(issuer: str) -> str | None:
    """Why upstream would not serve discovery for this issuer (NewOpenIDMetadataProvider), or None."""
    url = urlsplit(issuer)
    if url.scheme != "https":
        return f"issuer URL must use https scheme, got: {issuer}"
    if url.query:
        return f"issuer URL may not include a query, got: {issuer}"
    if url.fragment:
        return f"issuer URL may not include a fragment, got: {issuer}"
    return None


def routes(issuer: str, jwks_uri: str, keys: SigningKeys) -> dict[tuple[str, ...], Route]:
    """The two discovery endpoints, or none when the issuer is not a valid OIDC issuer URL."""
    problem = issuer_problem(issuer)
    if problem is not None:
        log.warning("service account issuer discovery is not served: %s", problem)
        return {}
    documents = {CONFIG_PATH: (provider_metadata(issuer, jwks_uri), CONFIG_TYPE), JWKS_PATH: (jwks(keys), JWKS_TYPE)}

    def route(body: bytes, content_type: str) -> Route:
        async def serve(request: ApiRequest) -> Response:
            response = Response(body, 200, content_type=content_type)
            response.headers["Cache-Control"] = f"public, max-age={MAX_AGE_SECONDS}"
            return response

        return serve

    return {path: route(body, content_type) for path, (body, content_type) in documents.items()}
