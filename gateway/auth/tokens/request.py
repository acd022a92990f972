"""``serviceaccounts/NAME/token``: TokenRequest, a create-only subresource that answers with a
signed token for the service account (upstream's pkg/registry/core/serviceaccount/storage/token.go).

The request may name audiences (default: the API server's), a lifetime (default one hour, at least
ten minutes) and an object the token is bound to: a Pod running as the service account, a Secret or
a Node, whose uid, when given, must be the object's. The token is good until its lifetime ends or
the service account or bound object goes away. A pod-bound token asked for 3607 seconds (kubelet's
projected tokens) lives a year and carries a warn-after time, as upstream extends it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from protokube.gateway import errors
from protokube.gateway.auth.tokens.claims import Binding, Ref, bound_claims
from protokube.gateway.auth.tokens.keys import SigningKeys
from protokube.gateway.auth.tokens.objects import Objects
from protokube.gateway.errors import FieldError
from protokube.gateway.objects.codec import Codec, Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions

AUTHENTICATION = "authentication.k8s.io"
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600
MAX_EXPIRATION = 1 << 32
WARN_ONLY_EXPIRATION = 3600 + 7
EXTENDED_EXPIRATION = 365 * 24 * 3600
BINDABLE_KINDS = ("Pod", "Secret", "Node")


@dataclass(frozen=True, slots=True)
class Issuer:
    """What tokens are signed with and say about their origin: the key, the issuers
    (--service-account-issuer; tokens name the first, any is accepted) and the API server's own
    audiences (--api-audiences, by default the issuers), and where issuer discovery says its keys
    are (--service-account-jwks-uri; "": this server's /openid/v1/jwks)."""

    keys: SigningKeys
    issuers: tuple[str, ...]
    api_audiences: tuple[str, ...]
    jwks_uri: str = ""

    @property
    def issuer(self) -> str:
        return self.issuers[0]

    def sign(self, claims: dict[str, Any]) -> str:
        import jwt  # at the first token, not at the server's start (issue 33)

        headers = {"kid": self.keys.key_id, "typ": None}  # as upstream's header: alg and kid only
        return jwt.encode(claims, self.keys.private, algorithm="RS256", headers=headers, sort_headers=True)


def _invalid(name: str, problems: Sequence[FieldError]) -> errors.StatusError:
    return errors.invalid(AUTHENTICATION, "TokenRequest", name, problems)


class TokenRequestStore:
    """The storage of serviceaccounts/token: create, with the service account's name from the URL."""

    def __init__(self, codec: Codec, issuer: Issuer, objects: Objects) -> None:
        self.codec = codec
        self.issuer = issuer
        self.objects = objects

    async def create_for(self, namespace: str, name: str, obj: Obj, options: WriteOptions) -> ObjectView:
        meta, spec = obj.metadata, obj.spec
        if meta.name and meta.name != name:
            detail = "must match the service account name if specified"
            raise _invalid(name, [FieldError.invalid("metadata.name", meta.name, detail)])
        if meta.namespace and meta.namespace != namespace:
            detail = "must match the service account namespace if specified"
            raise _invalid(name, [FieldError.invalid("metadata.namespace", meta.namespace, detail)])
        account = await self._get("ServiceAccount", namespace, name)
        if not spec.audiences:
            spec.audiences.extend(self.issuer.api_audiences)
        if not spec.HasField("expirationSeconds"):
            spec.expirationSeconds = DEFAULT_EXPIRATION
        meta.name, meta.namespace = name, namespace
        now = int(time.time())
        meta.creationTimestamp.seconds = now
        obj.ClearField("status")
        _validate(name, spec)
        binding = await self._binding(namespace, name, spec)
        expires_in, warn_after = spec.expirationSeconds, 0
        kube_audiences = all(a in self.issuer.api_audiences for a in spec.audiences)
        if binding.pod is not None and expires_in == WARN_ONLY_EXPIRATION and kube_audiences:
            expires_in, warn_after = EXTENDED_EXPIRATION, spec.expirationSeconds
        claims = bound_claims(
            issuer=self.issuer.issuer,
            namespace=namespace,
            account=Ref(account.metadata.name, account.metadata.uid),
            audiences=list(spec.audiences),
            issued_at=now,
            expires_in=expires_in,
            warn_after=warn_after,
            binding=binding,
            jti=str(uuid.uuid4()),
        )
        obj.status.token = self.issuer.sign(claims)
        obj.status.expirationTimestamp.seconds = now + spec.expirationSeconds
        return ObjectView.of(self.codec, obj, 0)

    async def _get(self, kind: str, namespace: str, name: str) -> Any:
        store = self.objects.store(kind)
        if store is None:
            raise errors.bad_request(f"cannot bind token to object of type /v1, Kind={kind}")
        return (await store.get(namespace, name, None)).obj

    async def _binding(self, namespace: str, name: str, spec: Any) -> Binding:
        if not spec.HasField("boundObjectRef"):
            return Binding()
        ref = spec.boundObjectRef
        group, _, version = ref.apiVersion.rpartition("/")
        if group or ref.kind not in BINDABLE_KINDS:
            raise errors.bad_request(f"cannot bind token to object of type {group}/{version}, Kind={ref.kind}")
        bound = await self._get(ref.kind, "" if ref.kind == "Node" else namespace, ref.name)
        if ref.uID and ref.uID != bound.metadata.uid:
            raise errors.conflict_on(
                ref.kind,
                ref.name,
                f"the UID in the bound object reference ({ref.uID}) does not match the UID in record. "
                "The object might have been deleted and then recreated",
            )
        target = Ref(bound.metadata.name, bound.metadata.uid)
        if ref.kind == "Secret":
            return Binding(secret=target)
        if ref.kind == "Node":
            return Binding(node=target)
        if bound.spec.serviceAccountName != name:
            raise errors.bad_request(
                f'cannot bind token for serviceaccount "{name}" to pod running with different serviceaccount name.'
            )
        return Binding(pod=target, node=await self._node_of(bound))

    async def _node_of(self, pod: Any) -> Ref | None:
        """The pod's node, for information (its uid when the node exists)."""
        if not pod.spec.nodeName:
            return None
        node = await self.objects.get("Node", "", pod.spec.nodeName)
        return Ref(pod.spec.nodeName, node.metadata.uid if node is not None else "")


def _validate(name: str, spec: Any) -> None:
    """upstream's ValidateTokenRequest."""
    seconds = spec.expirationSeconds
    if seconds < MIN_EXPIRATION:
        detail = "may not specify a duration less than 10 minutes"
        raise _invalid(name, [FieldError.invalid("spec.expirationSeconds", seconds, detail)])
    if seconds > MAX_EXPIRATION:
        detail = "may not specify a duration larger than 2^32 seconds"
        raise _invalid(name, [FieldError.invalid("spec.expirationSeconds", seconds, detail)])
