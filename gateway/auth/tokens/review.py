"""TokenReview: who a bearer token proves its holder to be, for the audiences asked (default: the
API server's) — computed by the same token authenticators requests meet, never stored (upstream's
pkg/registry/authentication/tokenreview)."""

from __future__ import annotations

from protokube.gateway import errors
from protokube.gateway.auth.authentication import Tokens, Unrecognized
from protokube.gateway.objects.codec import Codec, Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions

INVALID_TOKEN = "invalid bearer token"


class TokenReviewStore:
    def __init__(self, codec: Codec, tokens: Tokens) -> None:
        self.codec = codec
        self.tokens = tokens

    async def create(self, namespace: str, obj: Obj, options: WriteOptions) -> ObjectView:
        if not obj.spec.token:
            raise errors.bad_request("token is required for TokenReview in authentication")
        status = obj.status
        try:
            found = await self.tokens.authenticate_token(obj.spec.token, tuple(obj.spec.audiences))
        except Unrecognized as err:
            found, status.error = None, str(err)
        if found is None:
            status.error = status.error or INVALID_TOKEN
            return ObjectView.of(self.codec, obj, 0)
        status.authenticated = True
        user = found.user
        status.user.username = user.name
        if user.uid:
            status.user.uid = user.uid
        status.user.groups.extend(user.groups)
        for key, values in user.extra.items():
            status.user.extra[key].items.extend(values)
        status.audiences.extend(found.audiences)
        return ObjectView.of(self.codec, obj, 0)
