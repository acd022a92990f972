"""The routes the composition root installs: every verb's handler is bound to the resource's real
storage in the role the handler is typed by, exactly the declared verbs whose role the storage plays
have one, and the choices made once at installation (apply or not, which create, a connect
subresource's sub-paths) follow the storage. Built over the in-memory backend, without serving."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from protokube.gateway.app import APIServer, Settings
from protokube.gateway.handlers.connect import connect
from protokube.gateway.handlers.create import create, create_by_name, create_named
from protokube.gateway.handlers.delete import delete, delete_collection
from protokube.gateway.handlers.get import get
from protokube.gateway.handlers.installer import Routes
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
    Updater,
    Watcher,
)
from protokube.gateway.runtimeconfig import RuntimeConfig
from protokube.gateway.storage.memory import MemoryBackend
from protokube.schema import descriptors
from protokube.schema.registry import build

# Each handler: the verbs it may serve, and the roles its storage must play.
HANDLERS: dict[Callable[..., Any], tuple[frozenset[str], tuple[type, ...]]] = {
    get: (frozenset({"get"}), (Getter,)),
    list_: (frozenset({"list"}), (Lister,)),
    watch: (frozenset({"watch"}), (Watcher,)),
    create: (frozenset({"create"}), (Creater,)),
    create_named: (frozenset({"create"}), (NamedCreater,)),
    create_by_name: (frozenset({"create"}), (Creater, NamedCreater)),
    update: (frozenset({"update"}), (Updater,)),
    patch: (frozenset({"patch"}), (Updater,)),
    patch_or_apply: (frozenset({"patch"}), (Updater, Applier)),
    delete: (frozenset({"delete"}), (GracefulDeleter,)),
    delete_collection: (frozenset({"deletecollection"}), (CollectionDeleter,)),
    connect: (CONNECT_VERBS, (Connecter,)),
}
# The role a verb needs (either, for create).
VERB_ROLES: dict[str, tuple[type, ...]] = {
    "get": (Getter,),
    "list": (Lister,),
    "watch": (Watcher,),
    "create": (Creater, NamedCreater),
    "update": (Updater,),
    "patch": (Updater,),
    "delete": (GracefulDeleter,),
    "deletecollection": (CollectionDeleter,),
}


@pytest.fixture(scope="module")
def routes() -> dict[tuple[str, str, str, str], Routes]:
    registry = build(descriptors.all_messages())
    RuntimeConfig().apply(registry)  # what a server serves by default
    return APIServer(MemoryBackend(), "test:0", registry, Settings()).routes


def bound(routes: Routes, verb: str) -> tuple[Callable[..., Any], Any]:
    """The handler function a verb is served by, and the storage bound to it."""
    handler = routes.handlers[verb]
    assert isinstance(handler, partial)
    return handler.func, handler.args[0]


def test_every_handler_holds_its_role(routes: dict[tuple[str, str, str, str], Routes]) -> None:
    assert len(routes) >= 90  # every served resource and subresource
    for key, route in routes.items():
        resource = route.scope.resource
        declared = set(resource.subresources[key[3]].verbs if key[3] else resource.verbs)
        storages = set()
        for verb in route.handlers:
            func, storage = bound(route, verb)
            verbs, roles = HANDLERS[func]
            assert verb in verbs and verb in declared, (key, verb)
            assert all(isinstance(storage, role) for role in roles), (key, verb, type(storage))
            assert route.scope.codec is storage.codec
            storages.add(id(storage))
        assert len(storages) <= 1, key  # one storage serves a (resource, subresource)
        if route.handlers and isinstance(storage, Connecter):
            assert set(route.handlers) == declared & CONNECT_VERBS, key
            assert route.takes_path == storage.takes_path
        elif route.handlers:
            played = {verb for verb in declared if isinstance(storage, VERB_ROLES.get(verb, ()))}
            assert set(route.handlers) == played, key
            assert not route.takes_path


@pytest.mark.parametrize(
    ("key", "verb", "handler"),
    [
        (("", "v1", "pods", ""), "patch", patch_or_apply),
        (("", "v1", "pods", "status"), "patch", patch_or_apply),
        (("apps", "v1", "deployments", "scale"), "patch", patch_or_apply),
        (("certificates.k8s.io", "v1", "certificatesigningrequests", "approval"), "patch", patch),
        (("", "v1", "pods", ""), "create", create),
        (("", "v1", "pods", "eviction"), "create", create_named),
        (("", "v1", "pods", "binding"), "create", create_by_name),
        (("", "v1", "bindings", ""), "create", create_by_name),
        (("", "v1", "namespaces", "finalize"), "update", update),
        (("", "v1", "pods", "log"), "get", connect),
        (("", "v1", "pods", "exec"), "create", connect),
    ],
)
def test_choices_made_at_installation(
    routes: dict[tuple[str, str, str, str], Routes], key: tuple[str, str, str, str], verb: str, handler: object
) -> None:
    assert bound(routes[key], verb)[0] is handler


def test_verbs_without_a_handler(routes: dict[tuple[str, str, str, str], Routes]) -> None:
    assert set(routes[("", "v1", "namespaces", "finalize")].handlers) == {"update"}
    assert set(routes[("", "v1", "componentstatuses", "")].handlers) == {"get", "list"}
    assert set(routes[("", "v1", "bindings", "")].handlers) == {"create"}


def test_sub_paths_only_for_proxies(routes: dict[tuple[str, str, str, str], Routes]) -> None:
    taking = {key for key, route in routes.items() if route.takes_path}
    assert taking == {("", "v1", "pods", "proxy"), ("", "v1", "nodes", "proxy"), ("", "v1", "services", "proxy")}
