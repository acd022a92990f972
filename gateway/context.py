"""What a handler needs for one request: where it points, its options, its encoder, the store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from quart import Request

from gateway.negotiation import negotiate
from gateway.registry.store import Store
from gateway.requestinfo import RequestInfo, parse_bool
from protokube.schema.registry import Resource

if TYPE_CHECKING:
    from gateway.app import Gateway

PRETTY_AGENTS = ("curl", "Wget", "Mozilla/5.0")


def is_pretty(request: Request) -> bool:
    """upstream's isPrettyPrint: ?pretty=true, or a browser/curl/wget User-Agent."""
    value = request.args.get("pretty")
    if value is not None:
        return value == "" or parse_bool("pretty", value)
    return request.headers.get("User-Agent", "").startswith(PRETTY_AGENTS)


@dataclass
class RequestContext:
    gateway: Gateway
    request: Request
    info: RequestInfo
    resource: Resource
    store: Store
    request_id: str

    @property
    def namespace(self) -> str:
        return self.info.namespace if self.resource.namespaced else ""

    @property
    def pretty(self) -> bool:
        return is_pretty(self.request)

    def query(self) -> dict[str, str]:
        """Single-valued query parameters (the first value of each)."""
        return {k: v[0] for k, v in self.request.args.to_dict(flat=False).items() if v}

    def query_lists(self) -> dict[str, list[str]]:
        return self.request.args.to_dict(flat=False)

    def target(self, allowed: frozenset[str] = negotiate.SINGLE) -> negotiate.Target:
        """The negotiated format and representation of this response (406 when none fits)."""
        return negotiate.response_target(self.request.headers.get("Accept"), self.pretty, self.gateway.formats, allowed)
