"""The filter chain every request passes before routing (upstream's DefaultBuildHandlerChain).

Each filter is a small class that owns its dependencies and wraps the next handler; chain.py puts
them in the order they run, in one function.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from quart import Response

from protokube.gateway.request import ApiRequest

Handler = Callable[[ApiRequest], Awaitable[Response]]
