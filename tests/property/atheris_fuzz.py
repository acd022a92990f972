"""Coverage-guided fuzzing (atheris, libFuzzer) of the decoders and parsers, with the property
tests' own invariants: ``python -m tests.property.atheris_fuzz [-atheris_runs=N] [libFuzzer flags]``
(``make fuzz`` runs it when atheris installs). A crash is an exception the invariant does not allow;
libFuzzer then writes the input that caused it to ./crash-*.

The first input byte picks the target, the rest is its input: a request body in one of four media
types for a built-in kind and for a custom resource, a label or field selector, a continue token,
an Accept or Content-Type header, a patch of each type.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable

import atheris

with atheris.instrument_imports(include=["gateway", "protokube"]):
    from protokube.gateway import params, selectors
    from protokube.gateway.errors import StatusError
    from protokube.gateway.negotiation import mediatypes, negotiate
    from protokube.gateway.storage import continuetoken

from tests.property.test_bodies import CASES, _decode
from tests.property.test_patches import _patch

MEDIA_TYPES = [mediatypes.JSON, mediatypes.YAML, mediatypes.CBOR, mediatypes.PROTOBUF]
PATCH_TYPES = ["application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"]
SELECTABLE = ("metadata.name", "spec.nodeName")


def _client_error(call: Callable[[], object]) -> None:
    try:
        call()
    except StatusError as err:
        assert 400 <= err.code < 500, err.status


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")  # what the server's URL decoding hands over


def _body(codec_index: int, media_index: int) -> Callable[[bytes], None]:
    return lambda data: _decode(data, MEDIA_TYPES[media_index], CASES[codec_index][0])


TARGETS = [
    *(_body(codec, media) for codec in (0, 1, len(CASES) - 1) for media in range(len(MEDIA_TYPES))),
    lambda data: _client_error(lambda: selectors.label_selector(_text(data))),
    lambda data: _client_error(lambda: selectors.field_selector(_text(data), SELECTABLE)),
    lambda data: _client_error(lambda: params.parse_resource_version(_text(data))),
    lambda data: _client_error(lambda: negotiate.response_target(data.decode("latin-1"), False)),
    lambda data: _client_error(lambda: negotiate.request_media_type(data.decode("latin-1"))),
    *(lambda data, kind=kind: _patch(kind, data) for kind in PATCH_TYPES),
]


def _continue_token(data: bytes) -> None:
    with contextlib.suppress(continuetoken.ContinueTokenError):
        continuetoken.decode(_text(data))


TARGETS.append(_continue_token)


def one_input(data: bytes) -> None:
    if not data:
        return
    TARGETS[data[0] % len(TARGETS)](data[1:])


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
