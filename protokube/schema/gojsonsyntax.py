"""The syntax error Go's encoding/json reports for a JSON text (its scanner's checkValid), in its
words: ``unexpected end of JSON input``, ``invalid character 'x' looking for beginning of value``.

kube-apiserver reads a JSON body's kind with encoding/json first (apimachinery's
SimpleMetaFactory.Interpret), so a body that is not JSON is refused with these messages.
"""

from __future__ import annotations

SPACE = frozenset(b" \t\r\n")
DIGITS = frozenset(b"0123456789")
HEX = frozenset(b"0123456789abcdefABCDEF")
ESCAPES = frozenset(b'bfnrt\\/"')
LITERALS = (b"true", b"false", b"null")
END_OF_INPUT = "unexpected end of JSON input"


class _Invalid(Exception):
    def __init__(self, byte: int, context: str) -> None:
        super().__init__(f"invalid character {_quote(byte)} {context}")


# strconv.Quote's escapes of the bytes it names.
_NAMED = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 0x5C: "\\\\"}


def _quote(byte: int) -> str:
    """Go's quoteChar: the byte as a rune in single quotes, escaped as strconv.Quote escapes it."""
    if byte == ord("'"):
        return "'\\''"
    if byte == ord('"'):
        return "'\"'"
    if byte in _NAMED:
        return f"'{_NAMED[byte]}'"
    if byte < 0x80 and not chr(byte).isprintable():
        return f"'\\x{byte:02x}'"
    return f"'{chr(byte)}'" if chr(byte).isprintable() else f"'\\u{byte:04x}'"


def syntax_error(data: bytes) -> str | None:
    """encoding/json's syntax error for ``data``, or None when it is valid JSON."""
    try:
        _Scanner(data).value_then_end()
    except _Invalid as err:
        return str(err)
    except IndexError:
        return END_OF_INPUT
    except RecursionError:  # nested deeper than Python's stack: the caller's own message stands
        return None
    return None


class _Scanner:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def next(self) -> int:
        """The next byte; at the end one space, as Go's scanner.eof steps with (it may be refused
        where a value cannot end), then IndexError: the input ended inside a value."""
        if self.pos > len(self.data):
            raise IndexError
        byte = self.data[self.pos] if self.pos < len(self.data) else ord(" ")
        self.pos += 1
        return byte

    def next_non_space(self) -> int:
        byte = self.next()
        while byte in SPACE:
            byte = self.next()
        return byte

    def value_then_end(self) -> None:
        self.value(self.next_non_space())
        for byte in self.data[self.pos :]:
            if byte not in SPACE:
                raise _Invalid(byte, "after top-level value")

    def value(self, byte: int) -> None:
        """One value starting with ``byte``; leaves pos after its last byte."""
        if byte == ord("{"):
            self.object()
        elif byte == ord("["):
            self.array()
        elif byte == ord('"'):
            self.string()
        elif byte == ord("-") or byte in DIGITS:
            self.number(byte)
        elif byte in b"tfn":
            literal = next(word for word in LITERALS if word[0] == byte)
            for expected in literal[1:]:
                if (found := self.next()) != expected:
                    raise _Invalid(found, f"in literal {literal.decode()} (expecting {_quote(expected)})")
        else:
            raise _Invalid(byte, "looking for beginning of value")

    def object(self) -> None:
        byte = self.next_non_space()
        if byte == ord("}"):
            return
        while True:
            if byte != ord('"'):
                raise _Invalid(byte, "looking for beginning of object key string")
            self.string()
            byte = self.next_non_space()
            if byte != ord(":"):
                raise _Invalid(byte, "after object key")
            self.value(self.next_non_space())
            byte = self.next_non_space()
            if byte == ord("}"):
                return
            if byte != ord(","):
                raise _Invalid(byte, "after object key:value pair")
            byte = self.next_non_space()

    def array(self) -> None:
        byte = self.next_non_space()
        if byte == ord("]"):
            return
        while True:
            self.value(byte)
            byte = self.next_non_space()
            if byte == ord("]"):
                return
            if byte != ord(","):
                raise _Invalid(byte, "after array element")
            byte = self.next_non_space()

    def string(self) -> None:
        while (byte := self.next()) != ord('"'):
            if byte == ord("\\"):
                escape = self.next()
                if escape == ord("u"):
                    for _ in range(4):
                        if (digit := self.next()) not in HEX:
                            raise _Invalid(digit, "in \\u hexadecimal character escape")
                elif escape not in ESCAPES:
                    raise _Invalid(escape, "in string escape code")
            elif byte < 0x20:
                raise _Invalid(byte, "in string literal")

    def number(self, byte: int) -> None:
        if byte == ord("-"):
            byte = self.next()
            if byte not in DIGITS:
                raise _Invalid(byte, "in numeric literal")
        if byte != ord("0"):
            self.digits()
        if self.peek() == ord("."):
            self.pos += 1
            if (digit := self.next()) not in DIGITS:
                raise _Invalid(digit, "after decimal point in numeric literal")
            self.digits()
        if self.peek() in (ord("e"), ord("E")):
            self.pos += 1
            sign = self.next()
            digit = self.next() if sign in (ord("+"), ord("-")) else sign
            if digit not in DIGITS:
                raise _Invalid(digit, "in exponent of numeric literal")
            self.digits()

    def digits(self) -> None:
        while self.peek() in DIGITS:
            self.pos += 1

    def peek(self) -> int | None:
        return self.data[self.pos] if self.pos < len(self.data) else None
