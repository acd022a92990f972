"""The ``protokube.follow_body`` extension of the native servers' HTTP scopes.

In place of ``receive``, the application hands over two calls: ``arrived(body, more_body)`` gets the
body as it comes, ``gone()`` is called once if the client leaves (the request reset, the connection
lost) before the response is complete. The application then needs no task of its own waiting on
``receive`` beside the one that answers (gateway/asgi.py's while_connected); ``follow(None)`` stops.
"""

from __future__ import annotations

from collections.abc import Callable

FOLLOW_BODY = "protokube.follow_body"  # the scope's extension: Followed.follow

Arrived = Callable[[bytes, bool], None]
Gone = Callable[[], None]


class Followed:
    """A request of a server that offers FOLLOW_BODY; ``feed`` tells the follower what ``receive``
    would say now (the subclass keeps ``follower`` in its slots)."""

    __slots__ = ()
    follower: tuple[Arrived, Gone] | None

    def follow(self, arrived: Arrived | None, gone: Gone | None = None) -> None:
        """The extension's call: follow with ``arrived`` and ``gone`` from now on (what came so far
        is handed over at once), or stop with ``follow(None)``."""
        self.follower = None if arrived is None or gone is None else (arrived, gone)
        if self.follower is not None:
            self.feed()

    def feed(self) -> None:
        raise NotImplementedError
