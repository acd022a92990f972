"""The cluster's default class of a kind (StorageClass, IngressClass): the classes one annotation
marks as the default; of several, the newest (then the first by name), as 1.32 chooses (older
releases refused the object)."""

from __future__ import annotations

from collections.abc import Callable

from google.protobuf.message import Message

from protokube.gateway.params import ListOptions
from protokube.gateway.selectors import EVERYTHING, NO_FIELDS, Filter
from protokube.gateway.watchcache.cacher import Cacher


async def newest_default(classes: Cacher, is_default: Callable[[Message], bool]) -> Message | None:
    """The default class, or None; read through the watch cache (brought up to date first, so a
    class made just before is seen)."""
    listed = await classes.list(Filter("", EVERYTHING, NO_FIELDS), ListOptions())
    defaults = [view.obj for view in listed.items if is_default(view.obj)]
    return min(defaults, key=_newest_first, default=None)


def _newest_first(cls: Message) -> tuple[int, int, str]:
    created = cls.metadata.creationTimestamp
    return -created.seconds, -created.nanos, cls.metadata.name
