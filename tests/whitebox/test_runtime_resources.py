"""Resources that come and go while the server runs, with objects that are not compiled messages.

A resource without a compiled message (as custom resources will be) is added to the registry of a
running server: its storage, watch cache, routes and discovery entries appear; its objects are
stored as JSON and served with sorted keys, as upstream serves custom resources; it is removed
again and all of that goes. Requests go through the real filter chain and router, in process
(Quart's test client), over the in-memory backend.
"""

from __future__ import annotations

import asyncio
import json
import time

import orjson

from protokube.gateway.app import APIServer, create_app
from protokube.gateway.objects.unstructured import Unstructured
from protokube.gateway.params import ListOptions, WriteOptions
from protokube.gateway.storage.memory import MemoryBackend
from protokube.schema.registry import GroupVersionKind, Resource, Subresource

from .stack import run, running_server

GROUP, VERSION = "example.protokube.dev", "v1"
WIDGETS = Resource(
    gvk=GroupVersionKind(GROUP, VERSION, "Widget"),
    plural="widgets",
    singular="widget",
    short_names=("wd",),
    categories=(),
    namespaced=True,
    verbs=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"),
    subresources={"status": Subresource("status", GroupVersionKind(GROUP, VERSION, "Widget"), "", ("get", "update"))},
    printer_columns=(),
    selectable_fields=("metadata.name", "metadata.namespace", "spec.color"),
    storage_prefix=f"{GROUP}/widgets",
    name_rule=0,
    allow_create_on_update=False,
    return_deleted_object=False,
    storage_kind=None,
    message="",
    list_message="",
)
BASE = f"/apis/{GROUP}/{VERSION}"
COLLECTION = f"{BASE}/namespaces/default/widgets"


def widget(name: str, color: str) -> dict:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"color": color, "size": 3},
    }


async def body(response: object) -> dict:
    return json.loads(await response.get_data())  # type: ignore[attr-defined]


async def wait_ready(server: APIServer) -> None:
    deadline = time.monotonic() + 5
    while not server.cachers[WIDGETS.key].cache.ready.is_set():
        assert time.monotonic() < deadline, "the new resource's watch cache did not start"
        await asyncio.sleep(0.01)


def test_a_resource_added_and_removed_at_run_time() -> None:
    async def scenario() -> None:
        backend = MemoryBackend()
        async with running_server(backend) as server:
            client = create_app(server).test_client()
            assert (await client.get(COLLECTION)).status_code == 404
            server.registry.add(WIDGETS)
            await wait_ready(server)

            # discovery follows
            groups = await body(await client.get("/apis"))
            assert GROUP in [g["name"] for g in groups["groups"]]
            resources = await body(await client.get(BASE))
            first = resources["resources"][0]
            assert (first["name"], first["kind"], first["shortNames"]) == ("widgets", "Widget", ["wd"])

            # objects: JSON in, JSON in storage, keys sorted out
            created = await client.post(COLLECTION, json=widget("w1", "red"))
            assert created.status_code == 201, await created.get_data()
            raw = await created.get_data()
            assert raw.startswith(b'{"apiVersion":"example.protokube.dev/v1","kind":"Widget","metadata":{')
            obj = json.loads(raw)
            assert obj["spec"] == {"color": "red", "size": 3} and obj["metadata"]["generation"] == 1
            assert list(obj["metadata"]) == sorted(obj["metadata"])
            kv, _ = await backend.get(f"/registry/{GROUP}/widgets/default/w1".encode())
            assert kv is not None
            stored = orjson.loads(kv.value)
            assert stored["spec"] == {"color": "red", "size": 3} and "resourceVersion" not in stored["metadata"]

            await client.post(COLLECTION, json=widget("w2", "blue"))
            listed = await body(await client.get(COLLECTION, query_string={"fieldSelector": "spec.color=blue"}))
            assert listed["kind"] == "WidgetList" and [i["metadata"]["name"] for i in listed["items"]] == ["w2"]
            assert listed["items"][0]["kind"] == "Widget"  # items carry their kind, as unstructured lists do

            # no protobuf for such kinds: 406 unless JSON is acceptable too
            refused = await client.get(f"{COLLECTION}/w1", headers={"Accept": "application/vnd.kubernetes.protobuf"})
            assert refused.status_code == 406
            accepted = await client.get(
                f"{COLLECTION}/w1", headers={"Accept": "application/vnd.kubernetes.protobuf, application/json"}
            )
            assert accepted.status_code == 200 and accepted.content_type == "application/json"

            # updates: generation follows spec changes only; status only through its subresource
            obj["metadata"]["labels"] = {"tier": "front"}
            obj["status"] = {"ready": True}
            relabeled = await body(await client.put(f"{COLLECTION}/w1", json=obj))
            assert relabeled["metadata"]["generation"] == 1 and "status" not in relabeled
            relabeled["spec"]["color"] = "green"
            recolored = await body(await client.put(f"{COLLECTION}/w1", json=relabeled))
            assert recolored["metadata"]["generation"] == 2
            recolored["status"] = {"ready": True}
            recolored["spec"]["color"] = "ignored"
            status = await body(await client.put(f"{COLLECTION}/w1/status", json=recolored))
            assert status["status"] == {"ready": True} and status["spec"]["color"] == "green"
            assert status["metadata"]["generation"] == 2

            # a watch from the cache sees changes to the new kind
            store = server.stores[WIDGETS.key]
            stream = await store.watch(
                "default", ListOptions(resource_version=status["metadata"]["resourceVersion"]), time.monotonic() + 5
            )
            gone = widget("w3", "black")
            await store.create("default", store.codec.from_dict(gone).obj, WriteOptions())
            batch = await anext(stream.batches())
            ((event, event_type),) = batch  # type: ignore[misc]
            assert event_type == "ADDED" and isinstance(event.entry.view.obj, Unstructured)
            assert event.entry.view.obj.content["spec"]["color"] == "black"

            # removed: routes, discovery and the watch go with it
            server.registry.remove(*WIDGETS.key)
            assert (await client.get(COLLECTION)).status_code == 404
            groups = await body(await client.get("/apis"))
            assert GROUP not in [g["name"] for g in groups["groups"]]
            assert (await client.get(BASE)).status_code == 404
            assert [batch async for batch in stream.batches()] == []  # the stream ended
            stream.close()

    run(scenario)
