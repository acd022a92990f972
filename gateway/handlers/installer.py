"""Route installation (upstream's k8s.io/apiserver endpoints/installer.go): the handlers of one
(resource, subresource), each verb's bound once to the scope and to the storage typed by the role
that verb needs (registry/rest.py). A verb whose role the storage does not play gets no handler,
which the router answers with 405; nothing asks a storage which roles it plays while serving.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from protokube.gateway.handlers.common import VerbHandler
from protokube.gateway.handlers.connect import connect
from protokube.gateway.handlers.create import create, create_by_name, create_named
from protokube.gateway.handlers.delete import delete, delete_collection
from protokube.gateway.handlers.get import get
from protokube.gateway.handlers.list import list_
from protokube.gateway.handlers.patch import patch, patch_or_apply
from protokube.gateway.handlers.update import update
from protokube.gateway.handlers.watch import watch
from protokube.gateway.registry.rest import (
    CONNECT_VERBS,
    Applier,
    CollectionDeleter,
    Connecter,
    Creater,
    Getter,
    GracefulDeleter,
    Lister,
    NamedCreater,
    Storage,
    Updater,
    Watcher,
)
from protokube.gateway.request import ApiRequest, Response
from protokube.gateway.scope import RequestScope

Role = TypeVar("Role")


@dataclass(frozen=True, slots=True)
class Routes:
    """What one (resource, subresource) serves: a handler per verb, and whether a sub-path after
    the subresource is served too (pods/NAME/proxy/PATH)."""

    scope: RequestScope
    handlers: Mapping[str, VerbHandler]
    takes_path: bool = False


def install(scope: RequestScope, storage: Storage, verbs: Iterable[str]) -> Routes:
    """The routes of ``storage`` for the ``verbs`` its resource or subresource declares: a connect
    subresource serves each of them that an HTTP method maps to, any other storage each whose role
    it plays."""
    if isinstance(storage, Connecter):
        connecting = bind(connect, storage, scope)
        return Routes(scope, dict.fromkeys(CONNECT_VERBS.intersection(verbs), connecting), storage.takes_path)
    played = _role_handlers(storage, scope)
    return Routes(scope, {verb: played[verb] for verb in verbs if verb in played})


def _role_handlers(storage: Storage, scope: RequestScope) -> dict[str, VerbHandler]:
    """A handler for each verb whose role ``storage`` plays."""
    found: dict[str, VerbHandler] = {}
    if isinstance(storage, Getter):
        found["get"] = bind(get, storage, scope)
    if isinstance(storage, Lister):
        found["list"] = bind(list_, storage, scope)
    if isinstance(storage, Watcher):
        found["watch"] = bind(watch, storage, scope)
    if isinstance(storage, Creater) and isinstance(storage, NamedCreater):
        found["create"] = bind(create_by_name, storage, scope)
    elif isinstance(storage, Creater):
        found["create"] = bind(create, storage, scope)
    elif isinstance(storage, NamedCreater):
        found["create"] = bind(create_named, storage, scope)
    if isinstance(storage, Updater):
        found["update"] = bind(update, storage, scope)
        if isinstance(storage, Applier):
            found["patch"] = bind(patch_or_apply, storage, scope)
        else:
            found["patch"] = bind(patch, storage, scope)
    if isinstance(storage, GracefulDeleter):
        found["delete"] = bind(delete, storage, scope)
    if isinstance(storage, CollectionDeleter):
        found["deletecollection"] = bind(delete_collection, storage, scope)
    return found


def bind(
    handler: Callable[[Role, RequestScope, ApiRequest], Awaitable[Response]], storage: Role, scope: RequestScope
) -> VerbHandler:
    """``handler`` holding ``storage`` in the role it is typed by, and ``scope``."""
    return partial(handler, storage, scope)
