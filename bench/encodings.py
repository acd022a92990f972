"""Encodings: time and size per object for JSON, YAML, protobuf and CBOR, in process, on one realistic pod.

Encoding is what the gateway does for an object it has not cached yet (its response encoders, from the
decoded message); decoding is what it does with a request body (``decode_body``: parse, check the kind,
build the message). Sizes raw and gzipped at the gateway's response level. JSON is the
limit every other format is compared with.
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Callable

from bench.common import Row, fmt_bytes, ratio_row
from bench.pods import pod_message
from protokube.gateway.codecs import codec_for
from protokube.gateway.negotiation import mediatypes
from protokube.gateway.negotiation.bodies import decode_body
from protokube.gateway.negotiation.encoders import CBOREncoder, JSONEncoder, ProtobufEncoder, YAMLEncoder
from protokube.gateway.responses import GZIP_LEVEL
from protokube.schema import goshape
from protokube.schema.registry import GroupVersionKind, registry

GVK = GroupVersionKind("", "v1", "Pod")
CODEC = codec_for(registry().resource("", "v1", "pods"))
FORMATS = {
    "JSON": (JSONEncoder(), mediatypes.JSON),
    "YAML": (YAMLEncoder(), mediatypes.YAML),
    "protobuf": (ProtobufEncoder(), mediatypes.PROTOBUF),
    "CBOR": (CBOREncoder(), mediatypes.CBOR),
}


def per_call(fn: Callable[[], object], seconds: float) -> float:
    """Seconds per call: the best of 5 rounds, each about ``seconds``/5 long."""
    fn()
    start, n = time.perf_counter(), 0
    while time.perf_counter() - start < seconds / 25:  # calibrate
        fn()
        n += 1
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(max(n * 5, 1)):
            fn()
        best = min(best, (time.perf_counter() - start) / max(n * 5, 1))
    return best


def run(quick: bool) -> dict:
    seconds = 0.25 if quick else 1.5
    message = goshape.normalize(pod_message(1))  # as stored and cached: in Go's shape
    message.metadata.resourceVersion = "123456"
    expected = message.SerializeToString(deterministic=True)
    out: dict = {"object": "Pod (2 containers, status)", "formats": {}}
    for name, (encoder, media_type) in FORMATS.items():
        body = encoder.message(message, GVK)
        decoded = decode_body(body, media_type, CODEC, registry()).obj
        assert goshape.normalize(decoded).SerializeToString(deterministic=True) == expected, f"{name} round trip"
        out["formats"][name] = {
            "bytes": len(body),
            "gzip_bytes": len(gzip.compress(body, GZIP_LEVEL)),
            "encode_us": per_call(lambda e=encoder: e.message(message, GVK), seconds) * 1e6,
            "decode_us": per_call(lambda b=body, m=media_type: decode_body(b, m, CODEC, registry()), seconds) * 1e6,
        }
    return out


def rows(results: dict) -> list[Row]:
    formats = results["formats"]
    base = formats["JSON"]
    out = []
    for name, f in formats.items():
        limit = "" if name == "JSON" else "JSON "
        out.append(
            ratio_row(
                "encodings",
                f"{name} size (gzip {fmt_bytes(f['gzip_bytes'])})",
                fmt_bytes(f["bytes"]),
                limit + fmt_bytes(base["bytes"]) if limit else "",
                f["bytes"] / base["bytes"] if limit else None,
            )
        )
        for op in ("encode", "decode"):
            us, base_us = f[f"{op}_us"], base[f"{op}_us"]
            out.append(
                ratio_row(
                    "encodings",
                    f"{name} {op} per object",
                    f"{us:,.0f} µs",
                    f"JSON {base_us:,.0f} µs" if limit else "",
                    us / base_us if limit else None,
                )
            )
    return out
