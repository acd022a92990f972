"""Random (version 4) UUIDs in their text form, as upstream's uuid.New() makes them: object UIDs and
audit ids.

Drawn from ``random`` (seeded from os.urandom, and again in every forked process), about 1.5 µs;
uuid.uuid4() reads os.urandom (a system call) and builds a UUID object, about 5. Neither an object's UID
nor an audit id is a secret: every reader of the object or the response sees it; what they need is to be
unique.
"""

from __future__ import annotations

import random
from typing import Final

# A random (version 4, RFC 4122 variant) UUID's fixed bits.
UUID4_BITS: Final = (0x4000 << 64) | (0x8000 << 48)
UUID4_CLEAR: Final = ~((0xF000 << 64) | (0xC000 << 48))


def random_uuid() -> str:
    text = f"{random.getrandbits(128) & UUID4_CLEAR | UUID4_BITS:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"
