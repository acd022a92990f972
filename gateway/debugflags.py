"""/debug/flags: kube-apiserver's flags that can be changed while it runs. ``PUT /debug/flags/v``
with a number sets klog's verbosity; here it sets the gateway's log level (0: WARNING, 1 to 3:
INFO, 4 and more: DEBUG). Other methods get upstream's 406; ``/debug/flags`` lists the flags."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from protokube.gateway.errors import go_quote
from protokube.gateway.request import ApiRequest, Response

log = logging.getLogger("protokube.debugflags")
Route = Callable[[ApiRequest], Awaitable[Response]]
MAX_INT32 = 2**31 - 1
INDEX = """<html>
<head>
<title>/debug/flags/</title>
</head>
<body>
/debug/flags/<br>
<br>
flags:<br>
<table>

<tr>v<br>

</table>
<br>
full flags configurable<br>
</body>
</html>
"""


def _plain(code: int, text: str) -> Response:
    return Response(text + "\n", code, content_type="text/plain")


def log_level(verbosity: int) -> int:
    if verbosity >= 4:
        return logging.DEBUG
    return logging.INFO if verbosity >= 1 else logging.WARNING


def _go_int32(text: str) -> int:
    """strconv.ParseInt(text, 10, 32) with Go's error texts."""
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or not digits.isascii() or not digits.isdigit():
        raise ValueError(f"strconv.ParseInt: parsing {go_quote(text)}: invalid syntax")
    value = int(text)
    if not -MAX_INT32 - 1 <= value <= MAX_INT32:
        raise ValueError(f"strconv.ParseInt: parsing {go_quote(text)}: value out of range")
    return value


async def verbosity(request: ApiRequest) -> Response:
    if request.method != "PUT":
        return _plain(406, "unsupported http method")
    text = (await request.body()).decode("utf-8", "replace")
    try:
        value = _go_int32(text)
    except ValueError as err:
        return _plain(400, f"failed set klog.logging.verbosity {text}: {err}")
    logging.getLogger().setLevel(log_level(value))
    log.info("log verbosity set to %d", value)  # shown from 1 on
    return _plain(200, f"successfully set klog.logging.verbosity to {text}")


async def index(request: ApiRequest) -> Response:
    return Response(INDEX, 200, content_type="text/html; charset=utf-8")


def routes() -> dict[tuple[str, ...], Route]:
    """By path parts; they answer every method themselves."""
    return {("debug", "flags"): index, ("debug", "flags", "v"): verbosity}
