"""HTTP content negotiation: parsing Accept and Content-Type, choosing a representation.

Standard negotiation (RFC 9110): media ranges with parameters and q-values, ``*/*`` and
``type/*``, in order of preference. Kubernetes adds parameters that pick a *representation* of the
same data: ``as=Table;g=meta.k8s.io;v=v1`` and ``as=PartialObjectMetadata[List]``; and, for a
watch, ``stream=watch``.
"""

from __future__ import annotations

from typing import Final

JSON: Final = "application/json"
YAML: Final = "application/yaml"
PROTOBUF: Final = "application/vnd.kubernetes.protobuf"
CBOR: Final = "application/cbor"
CBOR_SEQ: Final = "application/cbor-seq"


# A plain class: a dataclass's generated ``__init__`` runs as Python, even compiled (README).
class MediaRange:
    def __init__(
        self, type: str, subtype: str, params: dict[str, str] | None = None, q: float = 1.0, index: int = 0
    ) -> None:
        self.type = type  # e.g. "application"
        self.subtype = subtype  # e.g. "json"
        self.params: dict[str, str] = {} if params is None else params
        self.q = q
        self.index = index  # position in the header, to keep the client's order among equal q

    @property
    def essence(self) -> str:
        return f"{self.type}/{self.subtype}"

    def matches(self, essence: str) -> bool:
        media_type, _, subtype = essence.partition("/")
        if self.type == "*":
            return True
        if self.type != media_type:
            return False
        return self.subtype in ("*", subtype)


def _split_params(text: str) -> tuple[str, dict[str, str]]:
    head, *rest = text.split(";")
    params = {}
    for item in rest:
        key, sep, value = item.strip().partition("=")
        if sep and key:
            params[key.strip().lower()] = value.strip().strip('"')
    return head.strip().lower(), params


def parse_media_type(text: str) -> MediaRange | None:
    """Parse one media type (a Content-Type); None when malformed."""
    essence, params = _split_params(text)
    media_type, slash, subtype = essence.partition("/")
    if not slash or not media_type or not subtype:
        return None
    return MediaRange(media_type, subtype, params)


def parse_accept(header: str | None) -> list[MediaRange]:
    """Media ranges of an Accept header, most preferred first (q, then specificity, then order)."""
    if not header or not header.strip():
        return [MediaRange("*", "*")]
    ranges = []
    for index, item in enumerate(header.split(",")):
        if not item.strip():
            continue
        parsed = parse_media_type(item)
        if parsed is None:
            continue
        params = dict(parsed.params)
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 1.0
        if q <= 0:
            continue
        ranges.append(MediaRange(parsed.type, parsed.subtype, params, q, index))
    return sorted(ranges, key=lambda r: (-r.q, -_specificity(r), r.index))


def _specificity(media: MediaRange) -> int:
    if media.type == "*":
        return 0
    return 1 if media.subtype == "*" else 2
